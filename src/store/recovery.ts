import { join } from 'node:path';
import { MAX_BOOK_ID } from '../model/valid-book.ts';
import { StoreCorruptError, StoreFormatError } from '../faults.ts';
import type { ChangeEntry } from './change.ts';
import { BookIndex } from './book-index.ts';
import { readDataFile } from '../fs/data-file.ts';
import { TEMP_SUFFIX, type FileLayer } from '../fs/durable-fs.ts';
import { PROBE_FILE } from './write-probe.ts';
import { holdsNoRecord, journalFirstSeq, JournalDamage, JournalVersionUnknown, scanJournal, type JournalRecord, type RecoveredJournal } from './journal.ts';
import { readSnapshot, SNAPSHOT_FILE } from './snapshot.ts';

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
  const snapshotSeq = snapshot?.seq ?? 0;
  let nextId = snapshot?.nextId ?? 1;
  let newIdsFrom = snapshot?.newIdsFrom ?? 1;
  const names = await fs.readdir(dir);
  const all = names
    .map((name) => ({ name, firstSeq: journalFirstSeq(name) }))
    .filter((j): j is { name: string; firstSeq: number } => j.firstSeq !== undefined)
    .sort((a, b) => a.firstSeq - b.firstSeq);
  // A journal is stale when the next one starts at or before the snapshot's next record.
  const stale = all.filter((_, i) => (all[i + 1]?.firstSeq ?? Infinity) <= snapshotSeq + 1).map((j) => j.name);
  const live = all.slice(stale.length);
  const changes: ChangeEntry[] = snapshot?.changes ?? [];
  const apply = (r: JournalRecord): void => {
    if (r.seq <= snapshotSeq) return;
    // Ids are given in seq order and never reused, so a put at or past newIdsFrom is the book's creation.
    if (r.op === 'put') {
      index.set(r.id, r.json);
      changes.push({ seq: r.seq, type: r.id >= newIdsFrom ? 'created' : 'updated', id: r.id, bookJson: r.json });
    } else {
      index.delete(r.id);
      changes.push({ seq: r.seq, type: 'deleted', id: r.id, bookJson: null });
    }
    if (r.id >= newIdsFrom) newIdsFrom = r.id + 1;
    if (r.id >= nextId) nextId = r.id + 1;
  };
  let seq = snapshotSeq;
  let torn: LoadedCatalogue['torn'];
  let unterminated: LoadedCatalogue['unterminated'];
  const journals: RecoveredJournal[] = [];
  for (const [i, { name, firstSeq }] of live.entries()) {
    const path = join(dir, name);
    const expected = journals.length === 0 ? Math.min(firstSeq, snapshotSeq + 1) : seq + 1;
    const bytes = await readDataFile(fs, path);
    if (firstSeq !== expected) {
      // A journal with no record overlapping records another holds: left by a rotation that failed half-way.
      if (holdsNoRecord(bytes) && firstSeq < expected) {
        stale.push(name);
        continue;
      }
      throw new StoreCorruptError(path, 0, `the journal starts at record ${firstSeq} where ${expected} was expected (a journal is missing)`);
    }
    let result;
    try {
      result = scanJournal(bytes, firstSeq, apply);
    } catch (err) {
      if (err instanceof JournalDamage) throw new StoreCorruptError(path, err.offset, err.message);
      if (err instanceof JournalVersionUnknown) throw new StoreFormatError(path, err.message);
      throw err;
    }
    if (result.unterminated || result.goodLength < bytes.length) {
      if (i < live.length - 1) throw new StoreCorruptError(path, result.goodLength, 'an incomplete record before the last journal ends');
    }
    if (result.unterminated) {
      unterminated = { name, offset: result.goodLength, damagedByte: bytes[result.goodLength] };
    } else if (result.goodLength < bytes.length) {
      const tail = bytes.subarray(result.goodLength);
      const ids = idsIn(tail);
      // Never acknowledged, but an id seen there is not handed out again (it may be in a log or a client).
      for (const id of ids) if (id >= nextId) nextId = id + 1;
      torn = { name, offset: result.goodLength, bytes: Buffer.from(tail), ids };
    }
    seq = Math.max(seq, result.lastSeq);
    journals.push({ name, firstSeq, bytes: result.goodLength + (result.unterminated ? 1 : 0), lastSeq: result.lastSeq, marked: result.marked });
  }
  // Replay spreads changes over many pages: startup rebuilds their list text before anyone waits on it.
  index.buildListTexts(Infinity);
  const temps = names.filter((n) => n === `${SNAPSHOT_FILE}${TEMP_SUFFIX}` || n === PROBE_FILE);
  return { index, nextId, seq, snapshotBytes: snapshot?.bytes ?? 0, changes, snapshotSeq, journals, torn, unterminated, stale, temps };
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
