// What JSON.parse objected to, for error messages and logs. V8 quotes the
// start of the input it could not parse ("Unexpected token 'a', "abc…" is not
// valid JSON"): that can be prompt text, which cachebreak never logs.
export function jsonProblem(error: unknown): string {
  return (error as Error).message.replace(/, ".*?"(\.\.\.)? is not valid JSON$/s, '');
}
