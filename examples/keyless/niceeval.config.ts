import { defineConfig } from "niceeval";

// Experiments live in experiments/**/*.ts (defineExperiment); evals in evals/**/*.eval.ts.
export default defineConfig({ maxConcurrency: 4, timeoutMs: 60_000 });
