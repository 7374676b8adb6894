import { describe, expect, it } from 'vitest';
import { DEFAULT_INSTRUCTIONS, applyInstruction, resolveInstruction } from '../../src/core/instructions.js';
import { ERROR_TYPES, failure, ok } from '../../src/core/result.js';

describe('DEFAULT_INSTRUCTIONS', () => {
  it.each(ERROR_TYPES.map((t) => [t]))('R4: %s has one sentence saying what to do', (errorType) => {
    const text = DEFAULT_INSTRUCTIONS[errorType];
    expect(text.length).toBeGreaterThan(20);
    expect(text.trim().endsWith('.')).toBe(true);
    expect(text.slice(0, -1)).not.toMatch(/\.\s/);
    expect(text).toMatch(/retry|fix|ask|tell the user|stop|use one of/i);
  });
});

describe('resolveInstruction', () => {
  const layers = {
    global: { timeout: 'global timeout', overloaded: 'global overloaded' },
    server: { timeout: 'server timeout', cancelled: 'server cancelled' },
    tool: { timeout: 'tool timeout' },
  };
  it.each([
    ['the tool layer wins', 'timeout', layers, 'tool timeout'],
    ['then the server layer', 'cancelled', layers, 'server cancelled'],
    ['then the global layer', 'overloaded', layers, 'global overloaded'],
    ['then the default', 'tool_error', layers, DEFAULT_INSTRUCTIONS.tool_error],
    ['no layers at all', 'unknown_tool', {}, DEFAULT_INSTRUCTIONS.unknown_tool],
    ['a blank override is skipped', 'timeout', { tool: { timeout: '  ' }, global: { timeout: 'g' } }, 'g'],
  ] as const)('R4: %s', (_label, errorType, given, expected) => {
    expect(resolveInstruction(errorType, given)).toBe(expected);
  });
});

describe('applyInstruction', () => {
  it('R4: a failure without an instruction gets the resolved one', () => {
    const result = applyInstruction(failure('timeout', 'x'), { server: { timeout: 'Retry once.' } });
    expect(result.instruction).toBe('Retry once.');
  });

  it("R4: a failure keeps the downstream's own instruction", () => {
    const result = applyInstruction(failure('tool_error', 'x', { instruction: 'own' }), {
      tool: { tool_error: 't' },
    });
    expect(result.instruction).toBe('own');
  });

  it("R4: a success gets the tool's success instruction, and none without one", () => {
    expect(applyInstruction(ok(1), { success: 'Quote it.' }).instruction).toBe('Quote it.');
    expect(applyInstruction(ok(1), { global: { timeout: 'x' } })).not.toHaveProperty('instruction');
    expect(applyInstruction(ok(1, { instruction: 'own' }), { success: 'Quote it.' }).instruction).toBe('own');
  });

  it.each(ERROR_TYPES.map((t) => [t]))('R4: every %s failure ends with an instruction', (errorType) => {
    expect(applyInstruction(failure(errorType, 'x')).instruction).toBe(DEFAULT_INSTRUCTIONS[errorType]);
  });
});
