import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchFlags } from './flags.ts';

/**
 * `node --import tsx bench/profile-summary.ts --dir DIR`: where a server's main thread spent its
 * busy time, from the V8 CPU profile(s) that `npm run bench -- --scenarios X --rounds 1 --cpu-prof
 * DIR` left in DIR/service and DIR/ceiling. Prints the shares by where the code lives (the
 * service's own modules, Node's HTTP layer, streams and sockets, GC, the kernel calls), the
 * functions with the most self time, and the inclusive share of the functions named with
 * --inclusive. Only the samples from the first request handled to the last count (startup is left
 * out), and each sample counts once: on a shared host a sampler that was not scheduled reports a
 * long gap, which summing its time would pin on whatever function it happened to see next. With
 * --cpu µs (the bench's CPU µs per answer for that server), each share is also shown as the
 * microseconds of an answer it stands for (docs/performance.md, "Where the microseconds go"). The
 * profile sees the main thread only: a write's fdatasync runs in libuv's pool and is not in it.
 */
const USAGE = `node --import tsx bench/profile-summary.ts --dir DIR [--cpu µs] [--top N] [--inclusive name,name]
  --dir DIR          a directory of .cpuprofile files (each summarized on its own)
  --cpu µs           the server's CPU µs per answer, as the bench printed it: shares shown as µs too
  --top N            functions listed by self time (25)
  --inclusive a,b    also print the inclusive share of these function names
`;
const flags = benchFlags(USAGE, { dir: { type: 'string' }, cpu: { type: 'string' }, top: { type: 'string', default: '25' }, inclusive: { type: 'string' } }, { cpu: 'amount', top: 'count' });

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
}

/** Node's HTTP server calls this for every request: samples under it mark the window of the load. */
const REQUEST_FRAME = 'parserOnIncoming';

/** Where a frame's code lives: the service's module, or the part of Node (or V8) it belongs to. */
function area(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === '') {
    if (functionName === '(garbage collector)') return 'gc';
    if (functionName === '(program)' || functionName === '(root)') return functionName;
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

function summarize(file: string, top: number, inclusiveNames: readonly string[], cpu: number | undefined): string | undefined {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const frames = (id: number): CallFrame[] => {
    const out: CallFrame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) out.push((byId.get(at) as ProfileNode).callFrame);
    return out;
  };
  const underRequest = (id: number): boolean => frames(id).some((f) => f.functionName === REQUEST_FRAME);
  const first = profile.samples.findIndex(underRequest);
  // A thread that handled no request (the loader's worker thread under tsx).
  if (first === -1) return undefined;
  let last = profile.samples.length - 1;
  while (last > first && !underRequest(profile.samples[last] as number)) last--;
  let busy = 0;
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const add = (m: Map<string, number>, key: string): void => void m.set(key, (m.get(key) ?? 0) + 1);
  for (let i = first; i <= last; i++) {
    const stack = frames(profile.samples[i] as number);
    const leaf = stack[0] as CallFrame;
    if (leaf.functionName === '(idle)') continue;
    busy++;
    add(areas, area(leaf));
    add(functions, `${leaf.functionName || '(anonymous)'} ${leaf.url.replace(/^.*\/dist\//, '')}:${leaf.lineNumber + 1}`);
    for (const name of new Set(stack.map((f) => f.functionName))) if (inclusiveNames.includes(name)) add(inclusive, name);
  }
  const share = (samples: number): string =>
    `${((100 * samples) / busy).toFixed(1).padStart(5)}%${cpu === undefined ? '' : ` ${((cpu * samples) / busy).toFixed(2).padStart(6)} µs`}`;
  const sorted = (m: Map<string, number>): [string, number][] => [...m].sort((a, b) => b[1] - a[1]);
  const out = [`${file}: ${busy} busy samples`, '', 'by area:'];
  for (const [where, samples] of sorted(areas)) if (samples / busy >= 0.002) out.push(`  ${share(samples)}  ${where}`);
  out.push('', `top ${top} by self time:`);
  for (const [name, samples] of sorted(functions).slice(0, top)) out.push(`  ${share(samples)}  ${name}`);
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
  const summary = summarize(join(dir, name), Number(flags.top), names, flags.cpu === undefined ? undefined : Number(flags.cpu));
  if (summary !== undefined) process.stdout.write(`${summary}\n\n`);
}
