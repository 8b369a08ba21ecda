/**
 * One OpenAI base URL (`…/v1`) on 127.0.0.1, port 0, in front of both OpenAI fakes: requests to
 * `…/responses` go to the Responses fake (Codex), everything else to the Chat Completions fake
 * (OpenCode). Both CLIs read the same `OPENAI_BASE_URL`, so one niceeval run can drive both. The
 * request log is the Responses fake's, then the Chat Completions fake's.
 */
import { type LoggedRequest } from "./_directives.ts";
import { chatCompletionsServer } from "./chat_completions.ts";
import { responsesServer } from "./responses.ts";

/** A running fake. */
export interface OpenAiFake extends AsyncDisposable {
  /** The base URL to configure (`…/v1`). */
  readonly baseUrl: string;
  /** Every request of both fakes (each with its `path`). */
  readonly requests: LoggedRequest[];
}

/** Starts both fakes and the front; `run` is both fakes' default shell command. */
export function openAiFake(options: { run?: string } = {}): OpenAiFake {
  const responses = responsesServer(options);
  const chat = chatCompletionsServer(options);
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
    const url = new URL(req.url);
    const target = url.pathname.endsWith("/responses") ? responses : chat;
    const to = new URL(target.baseUrl);
    url.protocol = to.protocol;
    url.host = to.host;
    return fetch(url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal: req.signal,
    });
  });
  return {
    baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    get requests() {
      return [...responses.requests, ...chat.requests];
    },
    [Symbol.asyncDispose]: async () => {
      await server.shutdown();
      await responses[Symbol.asyncDispose]();
      await chat[Symbol.asyncDispose]();
    },
  };
}
