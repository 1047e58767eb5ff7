import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * A bench script's flags: `--help`/`-h` prints `usage` and exits 0; an unknown flag or a missing
 * value prints one line and the usage on stderr and exits 2, never a stack trace.
 */
export function benchFlags<O extends Options>(usage: string, options: O): ReturnType<typeof parseArgs<{ options: O }>>['values'] {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(usage);
    process.exit(0);
  }
  try {
    return parseArgs({ args, options }).values;
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${usage}`);
    process.exit(2);
  }
}
