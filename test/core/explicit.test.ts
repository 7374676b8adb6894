import { describe, expect, it } from 'vitest';
import {
  EXPLICIT_ARGUMENT,
  checkExplicit,
  gateFor,
  gateSchema,
  gatedDescription,
  isGated,
  stripExplicit,
} from '../../src/core/explicit.js';
import { isFailure } from '../../src/core/result.js';

const on = { explicitDestructive: true };
const off = { explicitDestructive: false };
const context = { name: 'fs_delete', server: 'fs', tool: 'delete' };

describe('explicit', () => {
  it.each([
    ['destructive → gated', { destructiveHint: true }, on, true],
    ['destructive and read-only → not gated', { destructiveHint: true, readOnlyHint: true }, on, false],
    ['unannotated → not gated', undefined, on, false],
    ['empty annotations → not gated', {}, on, false],
    ['destructiveHint false → not gated', { destructiveHint: false }, on, false],
    ['explicit_destructive: false turns the annotation gate off', { destructiveHint: true }, off, false],
    ['require_explicit: true gates an unannotated tool', undefined, { ...on, requireExplicit: true }, true],
    [
      'require_explicit: true still gates with explicit_destructive: false',
      {},
      { ...off, requireExplicit: true },
      true,
    ],
    [
      'require_explicit: false un-gates a destructive tool',
      { destructiveHint: true },
      { ...on, requireExplicit: false },
      false,
    ],
    ['annotations that are not an object → not gated', 'destructive', on, false],
  ])('T7: %s', (_label, annotations, policy, expected) => {
    expect(isGated(annotations, policy)).toBe(expected);
  });

  it('T7: the single allowed value is the exposed name in upper case', () => {
    expect(gateFor('fs_delete-file')).toEqual({ value: 'FS_DELETE-FILE' });
  });

  it('T7: the gated schema is a copy with a required explicit_action of one allowed value', () => {
    const original = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
    const snapshot = structuredClone(original);
    const gated = gateSchema(original, gateFor('fs_delete'));
    expect(original).toEqual(snapshot);
    expect(gated['required']).toEqual(['path', EXPLICIT_ARGUMENT]);
    const property = (gated['properties'] as Record<string, Record<string, unknown>>)[EXPLICIT_ARGUMENT];
    expect(property).toMatchObject({ type: 'string', const: 'FS_DELETE', enum: ['FS_DELETE'] });
    expect(String(property?.['description'])).toMatch(/^REQUIRES EXPLICIT USER INSTRUCTION/);
  });

  it('T7: a schema without properties or required still gets the argument', () => {
    const gated = gateSchema({ type: 'object' }, gateFor('x'));
    expect(gated['required']).toEqual([EXPLICIT_ARGUMENT]);
    expect(Object.keys(gated['properties'] as object)).toEqual([EXPLICIT_ARGUMENT]);
  });

  it.each([
    ['with a downstream description', 'Deletes a file.'],
    ['without one', undefined],
  ])('T7: the description starts with "REQUIRES EXPLICIT USER INSTRUCTION", %s', (_label, description) => {
    const text = gatedDescription(description, gateFor('fs_delete'));
    expect(text.startsWith('REQUIRES EXPLICIT USER INSTRUCTION')).toBe(true);
    expect(text).toContain('"FS_DELETE"');
    if (description) expect(text.endsWith(description)).toBe(true);
  });

  it.each([
    ['missing', { path: 'a' }, 'missing', false],
    ['wrong value', { explicit_action: 'yes' }, 'wrong_value', true],
    ['lower case is not the value', { explicit_action: 'fs_delete' }, 'wrong_value', true],
    ['arguments not an object', 'FS_DELETE', 'missing', false],
    ['arguments undefined', undefined, 'missing', false],
  ])('T7: %s → consent_required naming the argument and value', (_label, args, reason, hasReceived) => {
    const result = checkExplicit(args, gateFor('fs_delete'), context);
    expect(result && isFailure(result)).toBe(true);
    expect(result?.errorType).toBe('consent_required');
    expect(result?.errorData).toMatchObject({ argument: EXPLICIT_ARGUMENT, value: 'FS_DELETE', reason });
    expect(result?.errorData && 'received' in result.errorData).toBe(hasReceived);
    expect(result?.meta).toMatchObject({ server: 'fs', tool: 'delete', source: 'proxy' });
    expect(result?.error).toContain('fs_delete');
  });

  it('T7: the right value passes', () => {
    expect(checkExplicit({ explicit_action: 'FS_DELETE' }, gateFor('fs_delete'), context)).toBeUndefined();
  });

  it('T7: stripping removes only explicit_action and keeps the other values as they are', () => {
    const nested = { deep: [1, 2] };
    const stripped = stripExplicit({ explicit_action: 'X', path: 'a', nested });
    expect(stripped).toEqual({ path: 'a', nested });
    expect(stripped['nested']).toBe(nested);
  });
});
