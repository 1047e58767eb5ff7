import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * CPU time a process has used (user + system), from /proc on Linux; undefined elsewhere. CPU per
 * answer barely moves when other work shares the machine, unlike req/s, so it shows what a change
 * to the service bought even on a noisy box.
 */
const TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

/** User + system CPU µs of one /proc stat file (a process's, or a thread's under /proc/PID/task). */
export function statMicros(path: string): number {
  const stat = readFileSync(path, 'utf8');
  // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15 (proc(5)).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / TICKS_PER_SECOND;
}

export function cpuMicros(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    return statMicros(`/proc/${pid}/stat`);
  } catch {
    return undefined;
  }
}
