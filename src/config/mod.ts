/**
 * @module config
 * Owns the project configuration: `defineConfig` and its validation, loading
 * `niceeval.config.ts`, and `.env` parsing. It never plans, schedules or writes files.
 */
export { defineConfig, rampOf, rampStepGiven } from "./define.ts";
export type { ConfigDefinition, ConfigOptions, PriceOptions, RampOptions } from "./define.ts";
export { CONFIG_FILE, loadConfig } from "./load.ts";
export { missingEnvEntries, parseEnvFile } from "./env_file.ts";
