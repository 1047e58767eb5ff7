import { missingToolsLine } from './helpers/system-tools.ts';

// Run by `npm test` before the suite: one line when checks that need a system program will skip.
const line = missingToolsLine();
if (line !== undefined) process.stderr.write(`${line}\n`);
