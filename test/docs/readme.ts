// Where the README is, for the tests that run what it says.
export const README = new URL('../../README.md', import.meta.url);
