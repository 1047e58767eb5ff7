import { ConfigError } from '../faults.ts';

export type BackupCommand = { kind: 'export'; dataDir: string } | { kind: 'import'; file: string; dataDir: string };

/** The usage lines of the backup commands, for --help. */
export const BACKUP_USAGE = `       book-catalogue export [--data-dir <dir>]         print every book as a JSON array (safe while the service runs)
       book-catalogue import <file> [--data-dir <dir>]  load such a file ("-": stdin) into an empty data directory
       book-catalogue move to-postgres [--data-dir <dir>]  copy the catalogue, ids, versions and feed position kept,
                                                           into STORE_URL's empty database (the service stopped)
       book-catalogue move to-files [--data-dir <dir>]     the same from STORE_URL's database into an empty data directory
`;

/**
 * `export` and `import` take only `--data-dir` (and import one file). `defaultDataDir` is what
 * the service would use (DATA_DIR, `.env`, then the default), so a backup reads the same place.
 */
export function parseBackupCommand(args: readonly string[], defaultDataDir: string): BackupCommand {
  const [kind, ...rest] = args;
  const { dataDir, positional } = dataDirAndArguments(kind as string, rest, defaultDataDir);
  if (kind === 'export') {
    if (positional.length > 0) throw new ConfigError(`unexpected argument ${JSON.stringify(positional[0])}: export writes to stdout`);
    return { kind, dataDir };
  }
  if (positional.length !== 1) throw new ConfigError('import needs exactly one file (or - for stdin)');
  return { kind: 'import', file: positional[0] as string, dataDir };
}

/** A command's `--data-dir` (else `defaultDataDir`) and its other arguments; any other option is refused. */
export function dataDirAndArguments(command: string, rest: readonly string[], defaultDataDir: string): { dataDir: string; positional: string[] } {
  let dataDir = defaultDataDir;
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string;
    if (arg === '--data-dir' || arg.startsWith('--data-dir=')) {
      const value = arg === '--data-dir' ? rest[++i] : arg.slice('--data-dir='.length);
      if (value === undefined || value === '' || value.startsWith('--')) throw new ConfigError('option --data-dir needs a value');
      dataDir = value;
    } else if (arg.startsWith('-') && arg !== '-') {
      throw new ConfigError(`unknown option ${arg} for ${command} (see --help)`);
    } else {
      positional.push(arg);
    }
  }
  return { dataDir, positional };
}
