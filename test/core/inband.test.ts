import { describe, expect, it } from 'vitest';
import { detectInband, detectOutputContract } from '../../src/core/inband.js';

describe('detectInband (N8)', () => {
  it.each([
    [
      'ADR-003 failure with every field',
      {
        success: false,
        error: 'No such file',
        error_type: 'not_found',
        message: 'The file is gone.',
        instruction: 'Ask the user for another path.',
        error_data: { path: '/x' },
      },
      {
        success: false,
        convention: 'result',
        error: 'No such file',
        errorCode: 'not_found',
        errorData: { path: '/x' },
        message: 'The file is gone.',
        instruction: 'Ask the user for another path.',
      },
    ],
    [
      'ADR-003 failure with exception fields',
      {
        success: false,
        error: 'boom',
        error_type: 'io',
        exception_type: 'OSError',
        exception_message: 'disk',
      },
      {
        success: false,
        convention: 'result',
        error: 'boom',
        errorCode: 'io',
        errorData: { exception_type: 'OSError', exception_message: 'disk' },
      },
    ],
    [
      'ADR-003 failure without error falls back to message',
      { success: false, message: 'Not allowed' },
      { success: false, convention: 'result', error: 'Not allowed', message: 'Not allowed' },
    ],
    [
      'ADR-003 success with value and texts',
      { success: true, value: [1, 2], message: 'Two rows.', instruction: 'Show them.' },
      { success: true, convention: 'result', value: [1, 2], message: 'Two rows.', instruction: 'Show them.' },
    ],
    [
      'ADR-003 success without value',
      { success: true },
      { success: true, convention: 'result', value: null },
    ],
    [
      'ADR-003 success with every field written as null',
      {
        success: true,
        value: 3,
        error: null,
        error_type: null,
        message: null,
        instruction: null,
        error_data: null,
      },
      { success: true, convention: 'result', value: 3 },
    ],
    [
      'ADR-002 failure',
      { status: 'ERROR', error: { code: 'NOT_FOUND', message: 'No client 7', details: { id: 7 } } },
      {
        success: false,
        convention: 'response',
        error: 'No client 7',
        errorCode: 'NOT_FOUND',
        errorData: { id: 7 },
      },
    ],
    [
      'ADR-002 failure with numeric code, scalar details and data: null',
      { status: 'ERROR', data: null, error: { code: 404, message: 'gone', details: 'see logs' } },
      {
        success: false,
        convention: 'response',
        error: 'gone',
        errorCode: '404',
        errorData: { details: 'see logs' },
      },
    ],
    [
      'ADR-002 success',
      { status: 'SUCCESS', data: { id: 1 }, error: null },
      { success: true, convention: 'response', value: { id: 1 } },
    ],
    [
      'ADR-0005 failure',
      { result: '', error: 'permission denied' },
      { success: false, convention: 'tool_result', error: 'permission denied' },
    ],
    [
      'ADR-0005 failure keeps a partial result',
      { result: 'partial', error: 'cut short' },
      { success: false, convention: 'tool_result', error: 'cut short', errorData: { result: 'partial' } },
    ],
    [
      'ADR-0005 success (empty error)',
      { result: 'file written', error: '' },
      { success: true, convention: 'tool_result', value: 'file written' },
    ],
    [
      'ADR-0005 success (null error)',
      { result: { n: 1 }, error: null },
      { success: true, convention: 'tool_result', value: { n: 1 } },
    ],
  ])('N8: %s is recognised', (_label, payload, expected) => {
    expect(detectInband(payload)).toEqual(expected);
  });

  it.each([
    ['success among unrelated keys', { success: false, items: [], total: 0 }],
    ['success that is not a boolean', { success: 'no', error: 'x' }],
    ['ADR-003 failure with a non-string error', { success: false, error: { code: 1 } }],
    ['ADR-003 failure with non-object error_data', { success: false, error: 'x', error_data: 'y' }],
    ['ADR-003 success with a failure-only field set', { success: true, error: 'x' }],
    ['status with another value', { status: 'PENDING', data: 1 }],
    ['status in lower case', { status: 'error', error: { code: 1, message: 'x' } }],
    ['status among unrelated keys', { status: 'ERROR', error: { code: 1, message: 'x' }, id: 4 }],
    ['ADR-002 error without a message', { status: 'ERROR', error: { code: 'X' } }],
    ['ADR-002 error without a code', { status: 'ERROR', error: { message: 'x' } }],
    ['ADR-002 error as a string', { status: 'ERROR', error: 'x' }],
    ['ADR-002 success with an error set', { status: 'SUCCESS', data: 1, error: { code: 1, message: 'x' } }],
    ['error alone', { error: 'x' }],
    ['result alone', { result: 'x' }],
    ['result and error with a third key', { result: 'x', error: 'y', id: 1 }],
    ['ADR-0005 with a non-string error', { result: 'x', error: { message: 'y' } }],
    ['an array', [{ success: false, error: 'x' }]],
    ['a string', 'success'],
    ['null', null],
  ])('N8: %s is not reinterpreted', (_label, payload) => {
    expect(detectInband(payload)).toBeUndefined();
  });
});

describe('detectOutputContract (N6)', () => {
  it.each([
    ['results alone', { results: { a: 1 } }],
    ['results null', { results: null }],
    [
      'every contract key',
      { results: 'x', meta_data: { n: 1 }, returned_file_names: ['a.txt'], returned_file_contents: ['aGk='] },
    ],
    ['file entries as objects', { results: 1, returned_file_contents: [{ name: 'a.bin', b64: 'AA==' }] }],
  ])('N6: %s passes through', (_label, payload) => {
    expect(detectOutputContract(payload)).toEqual(payload);
  });

  it.each([
    ['results among unrelated keys', { results: [], page: 2 }],
    ['no results key', { meta_data: {} }],
    ['meta_data that is not an object', { results: 1, meta_data: 'x' }],
    ['file names that are not strings', { results: 1, returned_file_names: [1] }],
    ['an array', [{ results: 1 }]],
  ])('N6: %s is an ordinary value', (_label, payload) => {
    expect(detectOutputContract(payload)).toBeUndefined();
  });
});
