/**
 * The writer's planned slots in compact form, by plan position (issue 20: memory that does not
 * grow with objects per slot). After `begin` the writer keeps only what it needs to write members
 * and Attempt headers: typed arrays for numbers, the digest as 32 bytes, the shared ID strings, and
 * one bit per slot for "has a member". A {@link WriterSlot} is rebuilt on demand.
 */
import type { WriterSlot } from "./documents.ts";

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const PREFIX = "sha256:";
/** Bytes of a SHA-256 digest. */
const DIGEST_BYTES = 32;
const HEX = "0123456789abcdef";
const ASCII = new TextDecoder("latin1");
/** The text of one digest, rebuilt in place: `sha256:` stays, the 64 hex digits are rewritten. */
const TEXT = new Uint8Array(PREFIX.length + 2 * DIGEST_BYTES);
for (let i = 0; i < PREFIX.length; i++) TEXT[i] = PREFIX.charCodeAt(i);

/** Writer slots by position, with the run each belongs to and whether it has a member. */
export class SlotTable {
  /** Run index by position; -1 where no slot was planned. */
  readonly #run: Int32Array;
  readonly #ordinal: Int32Array;
  /** 1 for score slots. */
  readonly #score: Uint8Array;
  readonly #member: Uint8Array;
  /** {@link DIGEST_BYTES} bytes per position. */
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
    const digest = slot.executionIdentityDigest;
    if (!DIGEST.test(digest)) this.#otherDigest.set(p, digest);
    else {
      for (let i = 0; i < DIGEST_BYTES; i++) {
        const at = PREFIX.length + 2 * i;
        this.#digest[p * DIGEST_BYTES + i] = (nibble(digest, at) << 4) | nibble(digest, at + 1);
      }
    }
    if (slot.carried) this.#carried.set(p, slot.carried);
  }

  /** The run index of the slot at `position`, or -1. */
  runOf(position: number): number {
    return position >= 0 && position < this.#run.length ? this.#run[position]! : -1;
  }

  /** The member fields of the slot at `position` (no digest); undefined where none was planned. */
  memberFields(
    position: number,
  ): Pick<WriterSlot, "slotId" | "evalId" | "ordinal"> | undefined {
    if (this.runOf(position) < 0) return undefined;
    return {
      slotId: this.#slotId[position]!,
      evalId: this.#evalId[position]!,
      ordinal: this.#ordinal[position]!,
    };
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
    // One decode of the rebuilt text: a flat string, not 64 pieces.
    const at = position * DIGEST_BYTES;
    for (let i = 0; i < DIGEST_BYTES; i++) {
      const byte = this.#digest[at + i]!;
      TEXT[PREFIX.length + 2 * i] = HEX.charCodeAt(byte >> 4);
      TEXT[PREFIX.length + 2 * i + 1] = HEX.charCodeAt(byte & 15);
    }
    return ASCII.decode(TEXT);
  }
}

/** The value of the lowercase hex digit at `index` of `text`. */
function nibble(text: string, index: number): number {
  const code = text.charCodeAt(index);
  return code <= 57 ? code - 48 : code - 87;
}
