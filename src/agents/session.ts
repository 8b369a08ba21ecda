/** Session state of one conversation line (authoring.md §7.5). */
import type { AgentSession, SessionSlot } from "./types.ts";

/**
 * Creates a typed slot of adapter-private session state. Two slots with the same name are still
 * different slots: they are distinct by identity.
 *
 * @param name A label for debugging.
 * @returns A new, frozen slot.
 * @throws {TypeError} When `name` is not a string.
 * @example
 * ```ts
 * import { createSessionSlot } from "niceeval/adapter";
 * const history = createSessionSlot<string[]>("history");
 * ```
 */
export function createSessionSlot<T>(name: string): SessionSlot<T> {
  if (typeof name !== "string") {
    throw new TypeError(`Cannot create session slot: name must be a string, got ${typeof name}`);
  }
  return Object.freeze({ name });
}

/**
 * Creates the empty state of a new session line: no id, no slot values.
 *
 * @returns A session whose `capture` keeps the first non-undefined id.
 */
export function createAgentSession(): AgentSession {
  return new LineSession();
}

class LineSession implements AgentSession {
  #id: string | undefined;
  readonly #values = new Map<SessionSlot<unknown>, unknown>();

  get id(): string | undefined {
    return this.#id;
  }

  capture(id: string | undefined): void {
    if (id !== undefined && typeof id !== "string") {
      throw new TypeError(`Cannot capture session id: expected a string, got ${typeof id}`);
    }
    if (this.#id === undefined) this.#id = id;
  }

  get<T>(slot: SessionSlot<T>): T | undefined {
    return this.#values.get(slot) as T | undefined;
  }

  set<T>(slot: SessionSlot<T>, value: T): void {
    this.#values.set(slot, value);
  }

  take<T>(slot: SessionSlot<T>): T | undefined {
    const value = this.#values.get(slot) as T | undefined;
    this.#values.delete(slot);
    return value;
  }
}
