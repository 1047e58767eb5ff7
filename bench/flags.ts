import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** What a numeric flag takes: a count is a whole number from 1; an amount (seconds, ms) any number above 0. */
export type NumericFlag = 'count' | 'amount';

const WHOLE = /^[1-9][0-9]*$/;
const DECIMAL = /^[0-9]+(\.[0-9]+)?$/;

/**
 * A bench script's flags: `--help`/`-h` prints `usage` and exits 0; an unknown flag, a missing
 * value, or a `numeric` flag given anything else prints one line and the usage on stderr and exits
 * 2, never a stack trace. `renamed` maps a name a flag no longer answers to onto the one it has, so
 * that a command written for the old name is refused with the new one named rather than as unknown.
 */
export function benchFlags<O extends Options>(
  usage: string,
  options: O,
  numeric?: Readonly<Partial<Record<keyof O & string, NumericFlag>>>,
  renamed?: Readonly<Record<string, keyof O & string>>,
): ReturnType<typeof parseArgs<{ options: O }>>['values'] {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(usage);
    process.exit(0);
  }
  const refuse = (message: string): never => {
    process.stderr.write(`${message}\n\n${usage}`);
    process.exit(2);
  };
  for (const [old, name] of Object.entries(renamed ?? {})) {
    if (args.some((arg) => arg === `--${old}` || arg.startsWith(`--${old}=`))) refuse(`Option '--${old}' is named '--${name}' now`);
  }
  try {
    const { values } = parseArgs({ args, options });
    const given: Readonly<Record<string, unknown>> = values;
    for (const [name, kind] of Object.entries(numeric ?? {}) as [string, NumericFlag][]) {
      const value = given[name];
      if (typeof value !== 'string') continue;
      if (kind === 'count' && !WHOLE.test(value)) refuse(`Option '--${name}' takes a whole number from 1, not '${value}'`);
      if (kind === 'amount' && !(DECIMAL.test(value) && Number(value) > 0)) refuse(`Option '--${name}' takes a number above 0, not '${value}'`);
    }
    return values;
  } catch (err) {
    return refuse((err as Error).message);
  }
}
