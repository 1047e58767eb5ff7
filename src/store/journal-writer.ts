import { join } from 'node:path';
import type { Logger } from '../log.ts';
import { openDataFile } from '../fs/data-file.ts';
import { appendAndSync, createForAppend, unlinkIfPresent, type FileHandleLike, type FileLayer } from '../fs/durable-fs.ts';
import { JOURNAL_HEADER, journalName, type JournalFile, type RecoveredJournal } from './journal.ts';

interface ActiveJournal extends JournalFile {
  handle: FileHandleLike;
}

/**
 * The one owner of the journal files: the active file's handle and durable length, the retired
 * files a snapshot does not cover yet, and every change made to them (append, cut back after a
 * failed write, rotate to a fresh file, delete those a snapshot covers). Its callers take turns:
 * the store's flush loop runs one of append, cutBack or rotate at a time, and deleteRetired runs
 * only for the retired files of the last rotation, which no append touches.
 */
export class JournalWriter {
  readonly #fs: FileLayer;
  readonly #dir: string;
  readonly #logger: Logger;
  #active: ActiveJournal;
  /** Journals before the active one, still needed until a snapshot covers them. */
  #retired: JournalFile[];

  private constructor(fs: FileLayer, dir: string, logger: Logger, active: ActiveJournal, retired: JournalFile[]) {
    this.#fs = fs;
    this.#dir = dir;
    this.#logger = logger;
    this.#active = active;
    this.#retired = retired;
  }

  /**
   * Takes over the journals recovery found (torn tails already cut). New records go to the last
   * one when it ends at `seq` and starts with the header (an empty one is given it); otherwise a
   * new journal starts at `seq` + 1, so that every record this release writes follows a header.
   */
  static async open(fs: FileLayer, dir: string, logger: Logger, journals: readonly RecoveredJournal[], seq: number): Promise<JournalWriter> {
    const last = journals.at(-1);
    let active: ActiveJournal;
    if (last !== undefined && last.lastSeq === seq && (last.marked || last.bytes === 0)) {
      const handle = await openDataFile(fs, join(dir, last.name), 'a');
      active = { name: last.name, firstSeq: last.firstSeq, bytes: last.bytes, handle };
      if (!last.marked) {
        try {
          await appendAndSync(handle, JOURNAL_HEADER);
        } catch (err) {
          await handle.close().catch(() => {});
          throw err;
        }
        active.bytes = JOURNAL_HEADER.length;
      }
    } else {
      active = await createJournal(fs, dir, seq + 1);
    }
    const retired = journals.filter((j) => j.name !== active.name).map(({ name, firstSeq, bytes }) => ({ name, firstSeq, bytes }));
    return new JournalWriter(fs, dir, logger, active, retired);
  }

  /** Bytes of the active journal that are durable. */
  get bytes(): number {
    return this.#active.bytes;
  }

  /** Bytes of every journal file the store still needs. */
  get totalBytes(): number {
    return this.#retired.reduce((n, j) => n + j.bytes, this.#active.bytes);
  }

  /** Appends and returns once fdatasync has returned: the seconds it took. */
  async append(bytes: Uint8Array): Promise<number> {
    const seconds = await appendAndSync(this.#active.handle, bytes);
    this.#active.bytes += bytes.length;
    return seconds;
  }

  /**
   * After a failed append: the active journal is cut back to its last durable length, so no part
   * of the failed records stays in the file. Throws when the cut fails: the file's state is then
   * unknown (the path is in the log line).
   */
  async cutBack(): Promise<void> {
    try {
      await this.#active.handle.truncate(this.#active.bytes);
      await this.#active.handle.datasync();
    } catch (err) {
      this.#logger.error('could not cut the journal back after a failed write: writes are refused until restart', { err: err as Error, file: join(this.#dir, this.#active.name) });
      throw err;
    }
  }

  /**
   * Starts the journal whose first record will be `nextSeq` (header and directory entry durable
   * first) and retires the active one; nothing to do when the active one starts there already.
   * Call only with no append in flight.
   */
  async rotate(nextSeq: number): Promise<void> {
    if (this.#active.firstSeq === nextSeq) return;
    const fresh = await createJournal(this.#fs, this.#dir, nextSeq);
    const old = this.#active;
    this.#active = fresh;
    this.#retired.push({ name: old.name, firstSeq: old.firstSeq, bytes: old.bytes });
    await old.handle.close().catch((err: unknown) => this.#logger.warn('closing a retired journal failed', { err: err as Error }));
  }

  /** A snapshot covering every retired journal is durable: they are deleted. */
  async deleteRetired(): Promise<void> {
    const obsolete = this.#retired;
    this.#retired = [];
    for (const j of obsolete) {
      await unlinkIfPresent(this.#fs, join(this.#dir, j.name)).catch((err: unknown) => {
        // Recovery skips a journal the snapshot covers, so one left behind costs only space.
        this.#logger.warn('could not delete a compacted journal', { err: err as Error, file: j.name });
      });
    }
    if (obsolete.length > 0) await this.#fs.syncDir(this.#dir);
  }

  close(): Promise<void> {
    return this.#active.handle.close();
  }
}

async function createJournal(fs: FileLayer, dir: string, firstSeq: number): Promise<ActiveJournal> {
  const name = journalName(firstSeq);
  const handle = await createForAppend(fs, join(dir, name), JOURNAL_HEADER);
  return { name, firstSeq, bytes: JOURNAL_HEADER.length, handle };
}
