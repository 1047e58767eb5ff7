import { spawnSync } from 'node:child_process';
import { findTool } from './system-tools.ts';

/** promtool's verdict on an exposition text: exit status and what it printed (lint problems included). */
export function promtoolCheck(text: string): { status: number | null; output: string } {
  const r = spawnSync(findTool('promtool') as string, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}
