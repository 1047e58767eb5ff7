import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { benchFlags } from './flags.ts';
import { median } from './median.ts';
import { scenariosNamed } from './scenarios.ts';

/**
 * `npm run bench:paired`: this build's dist/ against another build's, each serving the
 * scenario in its own fresh process with the client in the same process, one request at a time
 * (bench/paired-child.ts). Without a load generator and a second server competing for the
 * cores, a pair's two runs see the same host; the pairs alternate which build runs first, and the
 * geometric mean of the pairs' ratios is the figure (docs/performance.md, "Compression").
 */
const USAGE = `npm run bench:paired -- --baseline DIR [flags]: CPU per answer of dist/ against DIR (another build's dist/), in-process
  --scenarios a,b    which scenarios of npm run bench (read-one,list-100,create,update)
  --pairs N          runs of each build per scenario, alternating which goes first (8; even keeps the orders balanced)
  --requests N       requests measured per run (20000); --warmup N requests before (5000)
`;
const flags = benchFlags(USAGE, {
  baseline: { type: 'string' },
  scenarios: { type: 'string', default: 'read-one,list-100,create,update' },
  pairs: { type: 'string', default: '8' },
  requests: { type: 'string', default: '20000' },
  warmup: { type: 'string', default: '5000' },
}, { pairs: 'count', requests: 'count', warmup: 'count' });

const ROOT = new URL('..', import.meta.url).pathname;
type Side = 'service' | 'baseline';
const percent = (ratio: number): string => `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)}%`;

/** CPU µs per answer of one run of `dist` on `scenario`. */
function cpuPerAnswer(dist: string, scenario: string): number {
  const child = spawnSync(process.execPath, ['--import', 'tsx', 'bench/paired-child.ts', dist, scenario, flags.requests, flags.warmup], { cwd: ROOT, encoding: 'utf8' });
  const figure = Number(child.stdout.trim());
  if (child.status !== 0 || !(figure > 0)) throw new Error(`${scenario} on ${dist}: ${child.stderr.trim() || `exit ${child.status}`}`);
  return figure;
}

function main(): void {
  if (flags.baseline === undefined) throw new Error('--baseline DIR is required: the other build\'s dist/');
  const builds = { service: resolve(ROOT, 'dist'), baseline: resolve(flags.baseline) };
  const names = flags.scenarios.split(',');
  scenariosNamed(names);
  const lines: string[] = [];
  for (const name of names) {
    const ratios: Record<Side, number[]> = { service: [], baseline: [] };
    for (let pair = 0; pair < Number(flags.pairs); pair++) {
      const first: Side = pair % 2 === 0 ? 'service' : 'baseline';
      const figures: Record<Side, number> = { service: 0, baseline: 0 };
      figures[first] = cpuPerAnswer(builds[first], name);
      const second: Side = first === 'service' ? 'baseline' : 'service';
      figures[second] = cpuPerAnswer(builds[second], name);
      ratios[first].push(figures.service / figures.baseline);
      process.stderr.write(`${name} pair ${pair + 1} (${first} first): service ${figures.service.toFixed(2)} µs, baseline ${figures.baseline.toFixed(2)} µs CPU/answer\n`);
    }
    const all = [...ratios.service, ...ratios.baseline];
    // Whichever build runs first in a pair may be cheaper (or dearer) on a busy host; with the orders
    // balanced, the geometric mean of the pairs' ratios cancels that bias, which a median does not.
    const balanced = Math.exp(all.reduce((sum, r) => sum + Math.log(r), 0) / all.length);
    lines.push(
      `  ${name}: ${percent(balanced)} (geometric mean of ${all.length} pairs; median with this build first ${percent(median(ratios.service))}, ` +
        `with the baseline first ${percent(median(ratios.baseline))}; pairs ${percent(Math.min(...all))} to ${percent(Math.max(...all))})`,
    );
  }
  process.stdout.write(`\nCPU per answer of dist/ against ${builds.baseline}, ${flags.pairs} pairs of ${flags.requests} requests:\n${lines.join('\n')}\n`);
}

try {
  main();
} catch (err) {
  process.stderr.write(`bench paired: ${(err as Error).message}\n`);
  process.exitCode = 1;
}
