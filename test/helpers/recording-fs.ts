import { basename } from 'node:path';
import { nodeFileLayer, type FileHandleLike, type FileLayer } from '../../src/fs/durable-fs.ts';

/** Called before the real call; may wait (a slow disk) or throw (a failing one). */
export type Hook = (file: string) => Promise<void> | void;

export interface RecordingFs {
  fs: FileLayer;
  /** `<call> <file name>` in the order the calls returned, e.g. `datasync journal-…`, `syncDir data`. */
  events: string[];
  /** `close` runs before the real close, which happens even when the hook throws (no leaked fd). */
  hooks: { write?: Hook; datasync?: Hook; sync?: Hook; truncate?: Hook; rename?: Hook; close?: Hook };
  /** When false, datasync/sync return at once without touching the disk (fast bulk tests). */
  realSync: boolean;
}

/** The real file layer with every call recorded and each step open to delay or failure. */
export function recordingFs(): RecordingFs {
  const rec: RecordingFs = { fs: nodeFileLayer, events: [], hooks: {}, realSync: true };
  const step = async (call: keyof RecordingFs['hooks'], file: string, real: () => Promise<void>): Promise<void> => {
    await rec.hooks[call]?.(file);
    await real();
    rec.events.push(`${call} ${file}`);
  };
  const wrap = (h: FileHandleLike, file: string): FileHandleLike => ({
    async write(buffer, offset, length) {
      await rec.hooks.write?.(file);
      const r = await h.write(buffer, offset, length);
      rec.events.push(`write ${file}`);
      return r;
    },
    datasync: () => step('datasync', file, () => (rec.realSync ? h.datasync() : Promise.resolve())),
    sync: () => step('sync', file, () => (rec.realSync ? h.sync() : Promise.resolve())),
    truncate: (length) => step('truncate', file, () => h.truncate(length)),
    stat: () => h.stat(),
    readFile: () => h.readFile(),
    async close() {
      try {
        await rec.hooks.close?.(file);
      } finally {
        await h.close();
      }
      rec.events.push(`close ${file}`);
    },
  });
  rec.fs = {
    ...nodeFileLayer,
    async open(path, flags, mode) {
      const h = await nodeFileLayer.open(path, flags, mode);
      // Reads change nothing on disk: the record is of what does.
      if (flags === 'r') return h;
      rec.events.push(`open(${flags}) ${basename(path)}`);
      return wrap(h, basename(path));
    },
    rename: (from, to) => step('rename', basename(to), () => nodeFileLayer.rename(from, to)),
    async unlink(path) {
      await nodeFileLayer.unlink(path);
      rec.events.push(`unlink ${basename(path)}`);
    },
    async syncDir(dir) {
      if (rec.realSync) await nodeFileLayer.syncDir(dir);
      rec.events.push(`syncDir ${basename(dir)}`);
    },
  };
  return rec;
}

/** A promise and the function that settles it, for holding a hook until the test lets go. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

export function ioError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: injected failure`), { code });
}

/**
 * Holds a compaction's snapshot after its first write (the header and first chunk are out, the
 * later chunks are read from the live books once it goes on). `reached` resolves once it is held;
 * `release` removes the hook and lets the snapshot go on.
 */
export function holdSnapshot(rec: RecordingFs): { reached: Promise<void>; release: () => void } {
  const held = gate();
  const reached = gate();
  rec.hooks.write = async (file) => {
    if (file !== 'snapshot.json.tmp' || !rec.events.includes('write snapshot.json.tmp')) return;
    reached.open();
    await held.promise;
  };
  return {
    reached: reached.promise,
    release: () => {
      rec.hooks = {};
      held.open();
    },
  };
}
