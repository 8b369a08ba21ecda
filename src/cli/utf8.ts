/** UTF-8 encoding for the process streams without a new byte array per write. */

/** Size of the reusable buffer; longer texts get bytes of their own. */
const BUFFER_BYTES = 128 * 1024;

const encoder = new TextEncoder();

/** Encodes texts into one reusable buffer. */
export class ReusableUtf8Encoder {
  readonly #buffer: Uint8Array;

  constructor(bufferBytes = BUFFER_BYTES) {
    this.#buffer = new Uint8Array(bufferBytes);
  }

  /**
   * `text` as UTF-8 (as `TextEncoder.encode` gives it). A text that fits (at most 3 bytes per
   * UTF-16 unit) comes back as a view of the buffer, valid until the next call.
   */
  encode(text: string): Uint8Array {
    if (text.length * 3 > this.#buffer.length) return encoder.encode(text);
    return this.#buffer.subarray(0, encoder.encodeInto(text, this.#buffer).written);
  }
}
