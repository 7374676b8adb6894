import { describe, expect, it } from 'vitest';
import { closest, editDistance } from '../../src/core/suggest.js';

describe('suggest', () => {
  it.each([
    ['identical', 'read', 'read', 0],
    ['one substitution', 'read', 'raed', 2],
    ['insertion', 'read', 'reads', 1],
    ['empty left', '', 'abc', 3],
    ['empty right', 'abc', '', 3],
  ])('T9: edit distance, %s', (_label, a, b, expected) => {
    expect(editDistance(a, b)).toBe(expected);
  });

  it('T9: the ceiling stops early and reports max + 1', () => {
    expect(editDistance('aaaaaaaa', 'bbbbbbbb', 2)).toBe(3);
  });

  it.each([
    [
      'a typo finds the name',
      'fs_raed_file',
      ['fs_read_file', 'fs_write_file', 'mem_read'],
      ['fs_read_file', 'fs_write_file'],
    ],
    ['case is ignored', 'FS_READ', ['fs_read'], ['fs_read']],
    [
      'a fragment finds the names containing it',
      'read',
      ['fs_read_file', 'mem_read_graph', 'fs_write'],
      ['fs_read_file', 'mem_read_graph'],
    ],
    ['nothing close gives nothing', 'zzzz', ['fs_read_file', 'everything_echo'], []],
    ['at most three, best first', 'echo', ['echo1', 'echo2', 'echo3', 'echo'], ['echo', 'echo1', 'echo2']],
  ])('T9/C5: closest names, %s', (_label, name, candidates, expected) => {
    expect(closest(name, candidates)).toEqual(expected);
  });
});
