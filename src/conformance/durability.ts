import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WAIT_MS, type CatalogueUnderTest, type ConformanceTarget, type TestFunctions } from './target.ts';

/** This module's own extension: `.ts` when the suite runs from source, `.js` from dist/. */
const WRITER = fileURLToPath(new URL(`./writer-process${extname(fileURLToPath(import.meta.url))}`, import.meta.url));
/** Acknowledged creates to see before the kill: enough that some are in flight when it lands. */
const ACKS_BEFORE_KILL = 64;

/**
 * Runs the writer process on the catalogue until it has printed ACKS_BEFORE_KILL acknowledged ids,
 * kills it with SIGKILL mid-write, and resolves with every id it acknowledged (id → title).
 */
async function writeUntilKilled(catalogue: CatalogueUnderTest): Promise<Map<number, string>> {
  const { module, arg, execArgv = [] } = catalogue.opener;
  const child = spawn(process.execPath, [...execArgv, WRITER, module, arg], { stdio: ['ignore', 'pipe', 'pipe'] });
  const acked = new Map<number, string>();
  let pending = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const timer = setTimeout(() => child.kill('SIGKILL'), WAIT_MS);
  child.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop() as string;
    for (const line of lines) {
      const space = line.indexOf(' ');
      acked.set(Number(line.slice(0, space)), line.slice(space + 1));
    }
    if (acked.size >= ACKS_BEFORE_KILL) child.kill('SIGKILL');
  });
  await exited;
  clearTimeout(timer);
  assert.ok(acked.size >= ACKS_BEFORE_KILL, `the writer process acknowledged ${acked.size} creates before it ended: ${stderr}`);
  return acked;
}

/** An acknowledged write survives the loss of the process that made it (SIGKILL mid-write). */
export function durabilityRules(target: ConformanceTarget, { describe, it }: TestFunctions): void {
  describe('durability', () => {
    it('every create a process acknowledged before it was killed (SIGKILL) mid-write is there when the catalogue is opened again, and no id is given twice', async () => {
      const catalogue = await target.catalogue();
      try {
        const acked = await writeUntilKilled(catalogue);
        const store = await catalogue.open();
        try {
          const missing = [...acked].filter(([id, title]) => (JSON.parse(store.getJson(id) ?? 'null') as { title: string } | null)?.title !== title);
          assert.deepEqual(missing, [], 'acknowledged creates missing after the process was killed');
          const next = await store.create({ title: 'after', author: 'the kill', year: 2001 });
          assert.ok(next.id > Math.max(...acked.keys()), `id ${next.id} after the ids acknowledged`);
          const seqs = store.feed.after(0, Number.MAX_SAFE_INTEGER)?.map((e) => e.seq) ?? [];
          assert.deepEqual(seqs, Array.from({ length: seqs.length }, (_, i) => (seqs[0] as number) + i), 'feed seqs not contiguous after the kill');
        } finally {
          await store.close();
        }
      } finally {
        await catalogue.remove();
      }
    });
  });
}
