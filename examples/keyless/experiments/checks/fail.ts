import { defineExperiment } from "niceeval";
import { detAgent } from "../../agents/scripted.ts";

export default defineExperiment({ agent: detAgent("det-fail"), evals: ["deliberate-fail"] });
