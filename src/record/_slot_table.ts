/**
 * The writer's planned slots in compact form, by plan position (issue 20: memory that does not
 * grow with objects per slot). After `begin` the writer keeps only what it needs to write members
 * and Attempt headers: typed arrays for numbers, the digest as 32 bytes, the shared ID strings, and
 * one bit per slot for "has a member". A {@link WriterSlot} is rebuilt on demand.
 */
import type { WriterSlot } from "./documents.ts";

const DIGEST = /^sha256:([0-9a-f]{64})$/;
const DIGEST_BYTES = 32;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** Writer slots by position, with the run each belongs to and whether it has a member. */
export class SlotTable {
  /** Run index by position; -1 where no slot was planned. */
  readonly #run: Int32Array;
  readonly #ordinal: Int32Array;
  /** 1 for score slots. */
  readonly #score: Uint8Array;
  readonly #member: Uint8Array;
  readonly #digest: Uint8Array;
  readonly #slotId: (string | undefined)[];
  readonly #evalId: (string | undefined)[];
  /** Digests not of the `sha256:<hex>` form, kept as given. */
  readonly #otherDigest = new Map<number, string>();
  readonly #carried = new Map<number, NonNullable<WriterSlot["carried"]>>();

  constructor(size: number) {
    this.#run = new Int32Array(size).fill(-1);
    this.#ordinal = new Int32Array(size);
    this.#score = new Uint8Array(size);
    this.#member = new Uint8Array(size);
    this.#digest = new Uint8Array(size * DIGEST_BYTES);
    this.#slotId = new Array(size).fill(undefined);
    this.#evalId = new Array(size).fill(undefined);
  }

  /** Stores `slot` as a slot of run `run`. */
  set(slot: WriterSlot, run: number): void {
    const p = slot.position;
    this.#run[p] = run;
    this.#ordinal[p] = slot.ordinal;
    this.#score[p] = slot.kind === "score" ? 1 : 0;
    this.#slotId[p] = slot.slotId;
    this.#evalId[p] = slot.evalId;
    const hex = DIGEST.exec(slot.executionIdentityDigest)?.[1];
    if (hex === undefined) this.#otherDigest.set(p, slot.executionIdentityDigest);
    else {
      for (let i = 0; i < DIGEST_BYTES; i++) {
        this.#digest[p * DIGEST_BYTES + i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
      }
    }
    if (slot.carried) this.#carried.set(p, slot.carried);
  }

  /** The run index of the slot at `position`, or -1. */
  runOf(position: number): number {
    return position >= 0 && position < this.#run.length ? this.#run[position]! : -1;
  }

  /** The slot at `position`, rebuilt; undefined where none was planned. */
  slot(position: number): WriterSlot | undefined {
    if (this.runOf(position) < 0) return undefined;
    return {
      position,
      slotId: this.#slotId[position]!,
      evalId: this.#evalId[position]!,
      ordinal: this.#ordinal[position]!,
      kind: this.#score[position] === 1 ? "score" : "pass",
      executionIdentityDigest: this.#digestOf(position),
      carried: this.#carried.get(position) ?? null,
    };
  }

  /** Marks the slot as having a member; false when it already had one. */
  claimMember(position: number): boolean {
    if (this.#member[position] === 1) return false;
    this.#member[position] = 1;
    return true;
  }

  #digestOf(position: number): string {
    const other = this.#otherDigest.get(position);
    if (other !== undefined) return other;
    let hex = "sha256:";
    const at = position * DIGEST_BYTES;
    for (let i = 0; i < DIGEST_BYTES; i++) hex += HEX[this.#digest[at + i]!];
    return hex;
  }
}
