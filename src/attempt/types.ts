/**
 * The test context `t` and its handles (authoring.md §3). The contract belongs to discovery, whose
 * `defineEval` bodies are written against it; this domain implements it.
 */
export type {
  Conversation,
  EvalSandbox,
  Kind,
  ScoreTestContext,
  SendInput,
  SessionHandle,
  TestContext,
  TurnHandle,
} from "../discovery/mod.ts";
