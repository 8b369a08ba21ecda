import { defineScoreEval } from "niceeval";

export default defineScoreEval({
  test(t) {
    t.score(2).label("fixed two points");
  },
});
