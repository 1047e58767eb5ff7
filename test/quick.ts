import { QUICK } from './suite-plan.ts';

/*
 * `npm run test:quick` runs this one file: the quick test files imported one after another into a
 * single process, so the edit-test loop pays for one start of Node and tsx rather than one per
 * file (most of its CPU time when each had its own). `npm test` runs each in a process of its own.
 */
for (const file of QUICK) await import(`./${file}`);
