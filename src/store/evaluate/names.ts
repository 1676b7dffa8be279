// What evaluation needs of a store's ids for repeating values, synchronously:
// SQLite's Dictionary answers from its cache or the file, PostgreSQL's from
// what it resolved before the transaction's evaluation began.
import type { Prefix } from '../../core/types.js';

export type LabelKind = 'model' | 'provider' | 'agent';

export interface StreamInfo {
  projectId: number;
  sessionId: string;
  agentId: string;
}

export interface Names {
  /** The id of a label ('' for undefined). */
  label(kind: LabelKind, value: string | undefined): number;
  /** The value of a label id; undefined for null and for the empty label. */
  labelValue(id: number | null): string | undefined;
  streamById(id: number): StreamInfo;
  /** The stored prefix, without message hashes (those belong to each turn). */
  prefixOf(id: number): Prefix;
  /** The id of a prefix, message hashes and message markers aside. */
  prefix(prefix: Prefix): number;
  /** The stored prefix equal to `prefix`, with the turn's own message hashes and markers (see Dictionary.intern). */
  intern(prefix: Prefix): Prefix;
}
