import { defineExperiment } from "niceeval";
import { detAgent } from "../agents/scripted.ts";

export default defineExperiment({
  description: "deterministic baseline",
  agent: detAgent("det"),
  model: "det-v1",
  evals: ["greet", "tool", "math"],
});
