import { join } from 'node:path';
import { openDataFile } from '../fs/data-file.ts';
import { appendAndSync, unlinkIfPresent } from '../fs/durable-fs.ts';
import type { Logger } from '../log.ts';
import type { FileLayer } from '../fs/durable-fs.ts';

/** The file the probe writes, makes durable and removes; recovery removes one a crash left. */
export const PROBE_FILE = 'write-probe.tmp';

/** How often a store that failed a write checks, by itself, whether it can write durably again. */
export const DEFAULT_PROBE_INTERVAL_MS = 5_000;

/**
 * After a failed write, readiness must come back without client writes (a load balancer stops
 * sending them once /readyz says 503): every interval, a few bytes are written to a file of their
 * own in the data directory, fdatasynced and removed, through the store's file layer. The first
 * probe (or client write) that succeeds ends it. It never touches the journal.
 */
export class WriteProbe {
  readonly #s: { fs: FileLayer; dir: string; logger: Logger };
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  #inFlight: Promise<void> | undefined;
  #running = false;
  /** Failed writes so far: a probe that began before the latest failure proves nothing about it. */
  #failures = 0;

  constructor(where: { fs: FileLayer; dir: string; logger: Logger }, intervalMs: number) {
    this.#s = { fs: where.fs, dir: where.dir, logger: where.logger };
    this.#intervalMs = intervalMs;
  }

  /** True from a failed write until a probe or a write succeeds. */
  get running(): boolean {
    return this.#running;
  }

  start(): void {
    this.#running = true;
    this.#failures++;
    this.#schedule();
  }

  /** A client write reached disk: the disk works, so the probe has nothing left to show. */
  succeeded(): void {
    if (!this.#running) return;
    this.#running = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Stops probing; resolves once a probe in flight has finished with its file. */
  async stop(): Promise<void> {
    this.succeeded();
    await this.#inFlight;
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#inFlight !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#inFlight = this.#probeOnce().finally(() => {
        this.#inFlight = undefined;
        if (this.#running) this.#schedule();
      });
    }, this.#intervalMs);
    // A store waiting for its disk must not keep the process alive by itself.
    this.#timer.unref();
  }

  async #probeOnce(): Promise<void> {
    const { fs, dir, logger } = this.#s;
    const path = join(dir, PROBE_FILE);
    const failures = this.#failures;
    try {
      await unlinkIfPresent(fs, path);
      const handle = await openDataFile(fs, path, 'wx');
      try {
        await appendAndSync(handle, Buffer.from('probe\n'));
      } finally {
        await handle.close();
      }
      await fs.unlink(path);
      if (!this.#running || failures !== this.#failures) return;
      this.#running = false;
      logger.info('the data directory accepts durable writes again: ready');
    } catch (err) {
      logger.debug('write probe failed: still not ready', { err: err as Error });
      await unlinkIfPresent(fs, path).catch(() => {});
    }
  }
}
