/** The bounded output tail every provider keeps of a command. */

/** How many bytes of each stream a command keeps (the tail, sandboxes.md rule 15). */
const OUTPUT_TAIL_BYTES = 16 * 1024 * 1024;

/** Keeps the last `limit` bytes of a stream. */
export class TailBuffer {
  readonly #chunks: Uint8Array[] = [];
  #size = 0;
  #dropped = false;

  constructor(readonly limit: number = OUTPUT_TAIL_BYTES) {}

  /** True when bytes were dropped from the head. */
  get truncated(): boolean {
    return this.#dropped;
  }

  push(chunk: Uint8Array): void {
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    while (this.#size > this.limit) {
      const head = this.#chunks[0]!;
      const excess = this.#size - this.limit;
      this.#dropped = true;
      if (head.length <= excess) {
        this.#chunks.shift();
        this.#size -= head.length;
      } else {
        this.#chunks[0] = head.subarray(excess);
        this.#size -= excess;
      }
    }
  }

  bytes(): Uint8Array {
    const out = new Uint8Array(this.#size);
    let offset = 0;
    for (const chunk of this.#chunks) {
      out.set(chunk, offset);
      offset += chunk.length;
    }
    return out;
  }
}
