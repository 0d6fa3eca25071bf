// Lint for the server, its tests, benches and the example plugin (the web UI in ui/ has its own
// toolchain). Layout is Prettier's job (.prettierrc.json): eslint-config-prettier turns off every
// rule that would disagree with it, so the two never fight.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'ui/**',
      'dist/**',
      'node_modules/**',
      'data/**',
      'backups/**',
      'ext-plugins/**',
      'bench/out/**',
      'test-artifacts/**',
      'test/fixtures/plugins/syntax-error/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
      },
    },
    rules: {
      // `_name` marks a binding kept on purpose (a destructured field left out, an unused parameter)
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ['core/**', 'model/**', 'plugins/**'],
    rules: {
      // routes get request parts typed by their schema (TypeBox type provider, docs/ARCHITECTURE.md):
      // a cast would let the schema and the handler drift apart unnoticed
      'no-restricted-syntax': [
        'error',
        {
          selector:
            'TSAsExpression > MemberExpression[object.name=/^(request|req)$/][property.name=/^(body|params|query)$/]',
          message: 'Type request parts through the route schema (TypeBox type provider), not with a cast.',
        },
      ],
    },
  },
  {
    // tests read JSON answers whose shape the assertions check: `any` there is the honest type
    files: ['test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  prettier,
);
