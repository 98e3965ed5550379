/**
 * "Did you mean …?" for a word the caller typed (a JSON field, a CLI command or flag) among the words that exist:
 * a known synonym first (`instructions` → `systemPrompt`: what other agent platforms call it), then the same word in
 * another casing or separator style (`system_prompt`), then the nearest by edit distance when it is close enough to be
 * a typo. Undefined when nothing is close.
 */
const SYNONYMS: Record<string, readonly string[]> = {
  instructions: ['systemPrompt', 'prompt'],
  system: ['systemPrompt'],
  systemmessage: ['systemPrompt'],
  message: ['prompt'],
  input: ['prompt'],
  agent: ['profile'],
  label: ['name'],
};

const fold = (s: string) => s.toLowerCase().replace(/[-_\s]/g, '');

export function closest(word: string, candidates: Iterable<string>): string | undefined {
  const list = [...candidates];
  if (list.length === 0) return undefined;
  const folded = fold(word);
  for (const synonym of SYNONYMS[folded] ?? []) if (list.includes(synonym)) return synonym;
  const same = list.find((c) => fold(c) === folded);
  if (same) return same;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of list) {
    const d = distance(folded, fold(c));
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  // a typo: one edit in a short word, up to a third of a longer one
  return bestDistance <= Math.max(1, Math.floor(folded.length / 3)) ? best : undefined;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours each cost 1. */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** ` (did you mean x?)`, or nothing. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const hit = closest(word, candidates);
  return hit ? ` (did you mean ${hit}?)` : '';
}
