/** An empty module: the `start` benchmark's baseline, run as `deno run -A --frozen` like the CLI. */
export {};
