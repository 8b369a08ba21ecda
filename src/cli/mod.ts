/**
 * @module cli
 * The command line: argv → command → domain calls. It is the composition root (it wires the
 * scheduler, the attempt runner, the Record writer and the reporters) and holds no domain logic;
 * `process.ts` is the only process seam.
 */
