// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import n from 'eslint-plugin-n';
import globals from 'globals';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      '.peers/**',
      'config/schema.json',
      'src/core/meta-validators.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { n },
    rules: {
      'n/prefer-node-protocol': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },
  {
    // The status page's script runs in the browser (O4).
    files: ['assets/**/*.js'],
    languageOptions: { globals: globals.browser, sourceType: 'script' },
  },
  {
    // Scripts run by Node directly (the conformance client driver).
    files: ['scripts/**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    // A promise nobody awaits or catches is an unhandled rejection waiting to happen: type-aware.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: { '@typescript-eslint/no-floating-promises': 'error' },
  },
  {
    // stdout is the stdio protocol channel: nothing in src/ may print to it except the CLI.
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**'],
    rules: { 'no-console': 'error' },
  },
  {
    // core is pure: no I/O, no logger, no SDK runtime classes (N10; docs/architecture.md, "Layers").
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'core is pure: pass the world in as parameters.' },
            { group: ['pino', 'pino/*'], message: 'core does not log: return warnings.' },
            {
              group: [
                '@modelcontextprotocol/client',
                '@modelcontextprotocol/server',
                '@modelcontextprotocol/node',
                '@modelcontextprotocol/sdk',
                '@modelcontextprotocol/sdk/*',
                '../*/**',
              ],
              allowTypeImports: true,
              message:
                'core imports nothing of ours outside core and no SDK runtime (types, and the schemas of @modelcontextprotocol/core, are fine).',
            },
          ],
        },
      ],
    },
  },
);
