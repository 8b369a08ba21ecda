/**
 * The writer's planned slots in compact form, by plan position (issue 20: memory that does not
 * grow with objects per slot). After `begin` the writer keeps only what it needs to write members
 * and Attempt headers: typed arrays for numbers, the digest as 32 bytes and the SlotId as 8 (it is
 * rebuilt from them and the ordinal), the shared eval ID strings, and one bit per slot for "has a
 * member". A {@link WriterSlot} is rebuilt on demand.
 */
import { latin1Text, readHex, writeHex } from "../_shared/mod.ts";
import type { WriterSlot } from "./documents.ts";

const PREFIX = "sha256:";
/** Bytes of a SHA-256 digest. */
const DIGEST_BYTES = 32;
/** Bytes of the hex part of a SlotId (16 hex digits). */
const SLOT_BYTES = 8;
/** The text of one digest, rebuilt in place: `sha256:` stays, the 64 hex digits are rewritten. */
const DIGEST_TEXT = new Uint8Array(PREFIX.length + 2 * DIGEST_BYTES);
for (let i = 0; i < PREFIX.length; i++) DIGEST_TEXT[i] = PREFIX.charCodeAt(i);
/** The hex part of one SlotId, rebuilt in place. */
const SLOT_TEXT = new Uint8Array(2 * SLOT_BYTES);

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
  /** {@link SLOT_BYTES} bytes per position: the SlotId is these in hex, a dash, the ordinal. */
  readonly #slotHex: Uint8Array;
  /** SlotIds not of that form, kept as given. */
  readonly #otherSlotId = new Map<number, string>();
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
    this.#slotHex = new Uint8Array(size * SLOT_BYTES);
    this.#evalId = new Array(size).fill(undefined);
  }

  /** Stores `slot` as a slot of run `run`. */
  set(slot: WriterSlot, run: number): void {
    const p = slot.position;
    this.#run[p] = run;
    this.#ordinal[p] = slot.ordinal;
    this.#score[p] = slot.kind === "score" ? 1 : 0;
    this.#evalId[p] = slot.evalId;
    const ordinal = ordinalText(slot.ordinal);
    const slotId = slot.slotId;
    const compactId = slotId.length === 2 * SLOT_BYTES + 1 + ordinal.length &&
      slotId[2 * SLOT_BYTES] === "-" && slotId.endsWith(ordinal) &&
      readHex(slotId, 0, SLOT_BYTES, this.#slotHex, p * SLOT_BYTES);
    if (!compactId) this.#otherSlotId.set(p, slotId);
    const digest = slot.executionIdentityDigest;
    const compactDigest = digest.length === DIGEST_TEXT.length && digest.startsWith(PREFIX) &&
      readHex(digest, PREFIX.length, DIGEST_BYTES, this.#digest, p * DIGEST_BYTES);
    if (!compactDigest) this.#otherDigest.set(p, digest);
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
      slotId: this.#slotIdOf(position),
      evalId: this.#evalId[position]!,
      ordinal: this.#ordinal[position]!,
    };
  }

  /** The slot at `position`, rebuilt; undefined where none was planned. */
  slot(position: number): WriterSlot | undefined {
    if (this.runOf(position) < 0) return undefined;
    return {
      position,
      slotId: this.#slotIdOf(position),
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
    writeHex(this.#digest, position * DIGEST_BYTES, DIGEST_BYTES, DIGEST_TEXT, PREFIX.length);
    return latin1Text(DIGEST_TEXT);
  }

  #slotIdOf(position: number): string {
    const other = this.#otherSlotId.get(position);
    if (other !== undefined) return other;
    writeHex(this.#slotHex, position * SLOT_BYTES, SLOT_BYTES, SLOT_TEXT, 0);
    return `${latin1Text(SLOT_TEXT)}-${ordinalText(this.#ordinal[position]!)}`;
  }
}

/** The ordinal as a SlotId spells it: at least 4 digits. */
function ordinalText(ordinal: number): string {
  return String(ordinal).padStart(4, "0");
}
