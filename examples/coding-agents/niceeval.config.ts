import { defineConfig } from "niceeval";

// Each Attempt gets its own copy of workspace/ in a local sandbox; a real model run takes a while.
export default defineConfig({ timeoutMs: 300_000 });
