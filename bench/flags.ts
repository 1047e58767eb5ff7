import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** A flag whose default is a number takes only a positive number (a count, seconds, ms). */
const NUMBER = /^[0-9]+(\.[0-9]+)?$/;

/**
 * A bench script's flags: `--help`/`-h` prints `usage` and exits 0; an unknown flag, a missing
 * value, or a flag with a numeric default given anything but a positive number prints one line
 * and the usage on stderr and exits 2, never a stack trace.
 */
export function benchFlags<O extends Options>(usage: string, options: O): ReturnType<typeof parseArgs<{ options: O }>>['values'] {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(usage);
    process.exit(0);
  }
  const refuse = (message: string): never => {
    process.stderr.write(`${message}\n\n${usage}`);
    process.exit(2);
  };
  try {
    const { values } = parseArgs({ args, options });
    const given: Readonly<Record<string, unknown>> = values;
    for (const [name, option] of Object.entries(options)) {
      const value = given[name];
      if (typeof option.default === 'string' && NUMBER.test(option.default) && typeof value === 'string' && !(NUMBER.test(value) && Number(value) > 0)) {
        refuse(`Option '--${name}' takes a positive number, not '${value}'`);
      }
    }
    return values;
  } catch (err) {
    return refuse((err as Error).message);
  }
}
