import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchFlags } from './flags.ts';

/**
 * `node --import tsx bench/profile-summary.ts --dir DIR`: where a service's CPU went, from the V8 CPU
 * profile(s) `npm run bench -- --scenarios X --rounds 1 --cpu-prof DIR` left in DIR. Prints the
 * share of busy time (idle left out) by where the code lives (the service's own modules, Node's
 * HTTP layer, streams and sockets, GC), the functions with the most self time, and the inclusive
 * share of the functions named with --inclusive. Only the samples from the first request handled to
 * the last count (startup is left out). Multiply a share by the bench's CPU µs per answer for the
 * microseconds an answer spends there (docs/performance.md, "Where the microseconds go"); the
 * profile sees the main thread only, so a write's fdatasync (in libuv's pool) is not in it.
 */
const USAGE = `node --import tsx bench/profile-summary.ts --dir DIR [--answers N] [--top N] [--inclusive name,name]
  --dir DIR          a directory of .cpuprofile files (each summarized on its own)
  --answers N        answers the server sent while profiled (npm run bench prints it): adds µs per answer
  --top N            functions listed by self time (25)
  --inclusive a,b    also print the inclusive share of these function names
`;
const flags = benchFlags(USAGE, { dir: { type: 'string' }, answers: { type: 'string' }, top: { type: 'string', default: '25' }, inclusive: { type: 'string' } }, { top: 'count', answers: 'count' });

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Node's HTTP server calls this for every request: samples under it mark the window of the load. */
const REQUEST_FRAME = 'parserOnIncoming';

/** Where a frame's code lives: the service's module, or the part of Node (or V8) it belongs to. */
function area(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName === '(garbage collector)') return 'gc';
    if (functionName === '(program)' || functionName === '(idle)' || functionName === '(root)') return functionName;
    return `native ${functionName}`;
  }
  const dist = url.indexOf('/dist/');
  if (dist !== -1) return `service ${url.slice(dist + 6)}`;
  const internal = url.replace(/^node:/, '');
  if (/^(_http_|internal\/http)/.test(internal) || internal === 'http') return 'node http';
  if (/^(net|internal\/stream_base_commons|internal\/streams|stream|_stream)/.test(internal)) return 'node net/streams';
  if (/^(internal\/timers|timers|internal\/process\/task_queues|events|internal\/async_hooks)/.test(internal)) return 'node timers/events/ticks';
  return `node ${internal.split('/').slice(0, 2).join('/')}`;
}

function summarize(file: string, top: number, inclusiveNames: readonly string[], answers: number | undefined): string | undefined {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const underRequest = (id: number): boolean => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) if ((byId.get(at) as ProfileNode).callFrame.functionName === REQUEST_FRAME) return true;
    return false;
  };
  const first = profile.samples.findIndex(underRequest);
  let last = profile.samples.length - 1;
  while (last > first && !underRequest(profile.samples[last] as number)) last--;
  const self = new Map<number, number>();
  for (let i = Math.max(first, 0); i <= last; i++) {
    const id = profile.samples[i] as number;
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  let busy = 0;
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, micros] of self) {
    const frame = (byId.get(id) as ProfileNode).callFrame;
    if (frame.functionName === '(idle)') continue;
    busy += micros;
    const where = area(frame);
    areas.set(where, (areas.get(where) ?? 0) + micros);
    const key = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/dist\//, '')}:${frame.lineNumber + 1}`;
    functions.set(key, (functions.get(key) ?? 0) + micros);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = (byId.get(at) as ProfileNode).callFrame.functionName;
      if (inclusiveNames.includes(name) && !seen.has(name)) {
        seen.add(name);
        inclusive.set(name, (inclusive.get(name) ?? 0) + micros);
      }
    }
  }
  // A thread that handled no request (the loader's worker thread under tsx).
  if (first === -1) return undefined;
  const share = (micros: number): string =>
    `${((100 * micros) / busy).toFixed(1).padStart(5)}%${answers === undefined ? '' : ` ${(micros / answers).toFixed(2).padStart(6)} µs`}`;
  const sorted = (m: Map<string, number>): [string, number][] => [...m].sort((a, b) => b[1] - a[1]);
  const perAnswer = answers === undefined ? '' : `, ${(busy / answers).toFixed(2)} µs per answer`;
  const out = [`${file}: ${(busy / 1e6).toFixed(2)} s busy${perAnswer}`, '', 'by area:'];
  for (const [where, micros] of sorted(areas)) if (micros / busy >= 0.002) out.push(`  ${share(micros)}  ${where}`);
  out.push('', `top ${top} by self time:`);
  for (const [name, micros] of sorted(functions).slice(0, top)) out.push(`  ${share(micros)}  ${name}`);
  if (inclusiveNames.length > 0) {
    out.push('', 'inclusive:');
    for (const name of inclusiveNames) out.push(`  ${share(inclusive.get(name) ?? 0)}  ${name}`);
  }
  return out.join('\n');
}

const dir = flags.dir;
if (dir === undefined) {
  process.stderr.write(USAGE);
  process.exit(2);
}
const names = flags.inclusive?.split(',') ?? [];
for (const name of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
  const summary = summarize(join(dir, name), Number(flags.top), names, flags.answers === undefined ? undefined : Number(flags.answers));
  if (summary !== undefined) process.stdout.write(`${summary}\n\n`);
}
