/**
 * Framing of a Run's append-only log (`records.log`, docs/record.md): one record per line,
 * `<byte length> <crc32 as 8 hex> <compact JSON>\n`. JSON text never holds a raw line break, so a
 * line is a frame; the length and the checksum tell a whole frame from a torn or partial one.
 * A reader takes the longest prefix of whole frames and ignores the rest: a tail torn by a crash
 * never becomes a record.
 */
import type { Redactor } from "../_shared/mod.ts";
import { redactedJson } from "./atomic.ts";

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder("utf-8", { fatal: true });
const NEWLINE = 0x0a;
const SPACE = 0x20;
/** A length field longer than this is no frame: 10 digits hold any record a Run writes. */
const MAX_LENGTH_DIGITS = 10;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (IEEE 802.3) of `bytes`. */
export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = CRC_TABLE[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/**
 * Compact JSON of one record with credential values redacted (CLI-8). The redacted text must stay
 * valid JSON; when redacting the text breaks it (a secret that also occurs as digits of a number),
 * every string of `value` is redacted before serializing instead.
 */
export function recordLine(value: unknown, redactor?: Redactor): string {
  return redactedJson(value, redactor);
}

/** One framed line for `json` (a {@link recordLine}). */
export function frame(json: string): Uint8Array {
  const body = ENCODER.encode(json);
  const head = ENCODER.encode(`${body.length} ${crc32(body).toString(16).padStart(8, "0")} `);
  const out = new Uint8Array(head.length + body.length + 1);
  out.set(head, 0);
  out.set(body, head.length);
  out[out.length - 1] = NEWLINE;
  return out;
}

/** One record read back, with where its frame lies in the log. */
export interface LogEntry {
  readonly value: Record<string, unknown>;
  /** Byte offset of the frame. */
  readonly offset: number;
  /** Byte length of the whole frame, newline included. */
  readonly length: number;
}

/** What a scan of a log found. */
export interface LogScan {
  readonly entries: LogEntry[];
  /** End of the last whole frame: everything after it is a torn tail. */
  readonly validEnd: number;
  /** Bytes after {@link validEnd}. */
  readonly tornBytes: number;
}

/**
 * The whole frames at the start of `bytes`, in order. The first frame that is not whole (a wrong
 * length, checksum, missing newline, invalid UTF-8 or JSON, or a JSON value that is not an object)
 * ends the scan.
 */
export function scanLog(bytes: Uint8Array): LogScan {
  const entries: LogEntry[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const entry = frameAt(bytes, offset);
    if (entry === undefined) break;
    entries.push(entry);
    offset += entry.length;
  }
  return { entries, validEnd: offset, tornBytes: bytes.length - offset };
}

/** The record framed at `offset`, or undefined when no whole frame starts there. */
export function frameAt(bytes: Uint8Array, offset: number): LogEntry | undefined {
  let i = offset;
  let length = 0;
  for (; i < bytes.length && bytes[i] !== SPACE; i++) {
    const digit = bytes[i]! - 0x30;
    if (digit < 0 || digit > 9 || i - offset >= MAX_LENGTH_DIGITS) return undefined;
    length = length * 10 + digit;
  }
  if (i === offset || i + 10 > bytes.length || bytes[i + 9] !== SPACE) return undefined;
  let crc = 0;
  for (let k = i + 1; k < i + 9; k++) {
    const nibble = hexValue(bytes[k]!);
    if (nibble < 0) return undefined;
    crc = crc * 16 + nibble;
  }
  const start = i + 10;
  const end = start + length;
  if (end >= bytes.length || bytes[end] !== NEWLINE) return undefined;
  const body = bytes.subarray(start, end);
  if (crc32(body) !== crc) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(DECODER.decode(body));
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  return { value: value as Record<string, unknown>, offset, length: end + 1 - offset };
}

/** The value of a lowercase hex digit's byte, or −1. */
function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x61 + 10;
  return -1;
}
