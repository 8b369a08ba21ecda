import { defineExperiment } from "niceeval";
import { editor, template } from "./docker.ts";

// The same evals served by a pool of reused containers: between Attempts niceeval resets
// /workspace to its state after setup (keeping node_modules, .venv, .cache and .pnpm-store), so
// a run of many Attempts creates only as many containers as run at once.
export default defineExperiment({
  description: "shell editor in reused docker containers",
  agent: editor,
  sandbox: template,
  sandboxReuse: true,
  maxConcurrency: 1,
});
