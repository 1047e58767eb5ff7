import { join } from 'node:path';
import { MAX_BOOK_ID } from '../model/valid-book.ts';
import { StoreCorruptError, StoreFormatError } from '../faults.ts';
import type { ChangeEntry } from './change.ts';
import { BookIndex } from './book-index.ts';
import { readDataFile } from '../fs/data-file.ts';
import { TEMP_SUFFIX, type FileLayer } from '../fs/durable-fs.ts';
import { PROBE_FILE } from './write-probe.ts';
import { holdsNoRecord, journalFirstSeq, JournalDamage, JournalVersionUnknown, scanJournal, type JournalRecord, type RecoveredJournal, type ScanResult } from './journal.ts';
import { readSnapshot, SNAPSHOT_FILE, type LoadedSnapshot } from './snapshot.ts';

/** What the files say, read without changing them. */
export interface LoadedCatalogue {
  index: BookIndex;
  nextId: number;
  /** The last sequence number the files hold. */
  seq: number;
  snapshotBytes: number;
  /** The change feed's entries: those the snapshot carries, then every record replayed after it, in seq order. */
  changes: ChangeEntry[];
  /** The snapshot's sequence number (0 when there is none): changes up to it may be let go of. */
  snapshotSeq: number;
  /** Journals still needed for replay, oldest first; new records go to the last one. */
  journals: RecoveredJournal[];
  /** A torn final record at the end of the last journal: where it starts, its bytes, the ids in them. */
  torn: { name: string; offset: number; bytes: Buffer; ids: number[] } | undefined;
  /**
   * The last journal's last record is whole but lacks its newline: where the newline belongs, and
   * the byte that stands there instead (undefined when the file ends there). Its journal's `bytes`
   * count the newline that openStore writes.
   */
  unterminated: { name: string; offset: number; damagedByte: number | undefined } | undefined;
  /** Journals whose every record the snapshot already holds (left by a crash mid-compaction). */
  stale: string[];
  /** Temp files a crash left mid-write. */
  temps: string[];
}

/**
 * Recovery = snapshot + journal records after its sequence number. The snapshot may hold some
 * changes newer than its `seq` (it is written while writes go on, see compaction.ts); replaying
 * those records again is harmless because a put carries the whole book and a delete is a delete.
 */
export async function loadCatalogue(fs: FileLayer, dir: string): Promise<LoadedCatalogue> {
  const index = new BookIndex();
  const snapshot = await readSnapshot(fs, dir, index);
  const replay = new Replay(index, snapshot);
  const names = await fs.readdir(dir);
  const { stale, live } = journalsToReplay(names, replay.snapshotSeq);
  const { seq, journals, torn, unterminated, stale: leftByRotations } = await replayJournals(fs, dir, live, replay);
  // Replay spreads changes over many pages: startup rebuilds their list text before anyone waits on it.
  index.buildListTexts(Infinity);
  const temps = names.filter((n) => n === `${SNAPSHOT_FILE}${TEMP_SUFFIX}` || n === PROBE_FILE);
  const { snapshotSeq, nextId, changes } = replay;
  return { index, nextId, seq, snapshotBytes: snapshot?.bytes ?? 0, changes, snapshotSeq, journals, torn, unterminated, stale: [...stale, ...leftByRotations], temps };
}

/** Applies the journal records after the snapshot to the index and the feed's entries, and tracks the ids handed out. */
class Replay {
  readonly snapshotSeq: number;
  readonly changes: ChangeEntry[];
  nextId: number;
  /** The first id a put creates: ids are given in seq order and never reused, so a put at or past it is the book's creation. */
  #newIdsFrom: number;
  readonly #index: BookIndex;

  constructor(index: BookIndex, snapshot: LoadedSnapshot | undefined) {
    this.#index = index;
    this.snapshotSeq = snapshot?.seq ?? 0;
    this.changes = snapshot?.changes ?? [];
    this.nextId = snapshot?.nextId ?? 1;
    this.#newIdsFrom = snapshot?.newIdsFrom ?? 1;
  }

  readonly apply = (r: JournalRecord): void => {
    if (r.seq <= this.snapshotSeq) return;
    if (r.op === 'put') {
      this.#index.set(r.id, r.json);
      this.changes.push({ seq: r.seq, type: r.id >= this.#newIdsFrom ? 'created' : 'updated', id: r.id, bookJson: r.json });
    } else {
      this.#index.delete(r.id);
      this.changes.push({ seq: r.seq, type: 'deleted', id: r.id, bookJson: null });
    }
    if (r.id >= this.#newIdsFrom) this.#newIdsFrom = r.id + 1;
    this.reserve(r.id);
  };

  /** An id never handed out again: a record's, or one seen in a torn record (never acknowledged, but it may be in a log or a client). */
  reserve(id: number): void {
    if (id >= this.nextId) this.nextId = id + 1;
  }
}

/** The journals in `names` by first seq: those the snapshot holds wholly (stale), and the rest. */
function journalsToReplay(names: readonly string[], snapshotSeq: number): { stale: string[]; live: { name: string; firstSeq: number }[] } {
  const all = names
    .map((name) => ({ name, firstSeq: journalFirstSeq(name) }))
    .filter((j): j is { name: string; firstSeq: number } => j.firstSeq !== undefined)
    .sort((a, b) => a.firstSeq - b.firstSeq);
  // A journal is stale when the next one starts at or before the snapshot's next record.
  const stale = all.filter((_, i) => (all[i + 1]?.firstSeq ?? Infinity) <= snapshotSeq + 1).map((j) => j.name);
  return { stale, live: all.slice(stale.length) };
}

type Replayed = Pick<LoadedCatalogue, 'seq' | 'journals' | 'torn' | 'unterminated' | 'stale'>;

/** Replays each journal in turn; only the last may end in a torn or unterminated record. */
async function replayJournals(fs: FileLayer, dir: string, live: readonly { name: string; firstSeq: number }[], replay: Replay): Promise<Replayed> {
  const replayed: Replayed = { seq: replay.snapshotSeq, journals: [], torn: undefined, unterminated: undefined, stale: [] };
  for (const [i, { name, firstSeq }] of live.entries()) {
    const path = join(dir, name);
    const expected = replayed.journals.length === 0 ? Math.min(firstSeq, replay.snapshotSeq + 1) : replayed.seq + 1;
    const bytes = await readDataFile(fs, path);
    if (!continuesTheRecords(path, bytes, firstSeq, expected)) {
      replayed.stale.push(name);
      continue;
    }
    const result = scanOrRefuse(path, bytes, firstSeq, replay.apply);
    const tail = tailOf(name, bytes, result);
    if (tail !== undefined && i < live.length - 1) throw new StoreCorruptError(path, result.goodLength, 'an incomplete record before the last journal ends');
    if (tail?.unterminated !== undefined) replayed.unterminated = tail.unterminated;
    if (tail?.torn !== undefined) {
      for (const id of tail.torn.ids) replay.reserve(id);
      replayed.torn = tail.torn;
    }
    replayed.seq = Math.max(replayed.seq, result.lastSeq);
    replayed.journals.push({ name, firstSeq, bytes: result.goodLength + (result.unterminated ? 1 : 0), lastSeq: result.lastSeq, marked: result.marked });
  }
  return replayed;
}

/**
 * Whether a journal starts at `expected`, the record after those before it: true to replay it;
 * false for one with no record that overlaps records another holds, left by a rotation that failed
 * half-way (stale). Any other start means a journal is missing.
 */
function continuesTheRecords(path: string, bytes: Buffer, firstSeq: number, expected: number): boolean {
  if (firstSeq === expected) return true;
  if (holdsNoRecord(bytes) && firstSeq < expected) return false;
  throw new StoreCorruptError(path, 0, `the journal starts at record ${firstSeq} where ${expected} was expected (a journal is missing)`);
}

/** scanJournal, its faults told as the store's: damage at an offset, or a format this release does not know. */
function scanOrRefuse(path: string, bytes: Buffer, firstSeq: number, apply: (r: JournalRecord) => void): ScanResult {
  try {
    return scanJournal(bytes, firstSeq, apply);
  } catch (err) {
    if (err instanceof JournalDamage) throw new StoreCorruptError(path, err.offset, err.message);
    if (err instanceof JournalVersionUnknown) throw new StoreFormatError(path, err.message);
    throw err;
  }
}

/** What follows a journal's last whole record: its missing newline, a torn record, or nothing (undefined). */
function tailOf(name: string, bytes: Buffer, result: ScanResult): Pick<LoadedCatalogue, 'torn' | 'unterminated'> | undefined {
  if (result.unterminated) return { unterminated: { name, offset: result.goodLength, damagedByte: bytes[result.goodLength] }, torn: undefined };
  if (result.goodLength === bytes.length) return undefined;
  const tail = bytes.subarray(result.goodLength);
  return { torn: { name, offset: result.goodLength, bytes: Buffer.from(tail), ids: idsIn(tail) }, unterminated: undefined };
}

/** Every `"id":N` in a torn record's bytes that names a book id (up to MAX_BOOK_ID), in the order they appear. */
function idsIn(bytes: Buffer): number[] {
  const ids: number[] = [];
  for (const m of bytes.toString('latin1').matchAll(/"id":(\d{1,16})/g)) {
    const id = Number(m[1]);
    if (id >= 1 && id <= MAX_BOOK_ID) ids.push(id);
  }
  return ids;
}
