// The part of the semver package (a transitive dependency, pinned as a
// development one) the offline audit uses; it ships no types of its own.
declare module 'semver' {
  export function satisfies(version: string, range: string, options?: { includePrerelease?: boolean }): boolean;
  export function validRange(range: string): string | null;
  export function valid(version: string): string | null;
}
