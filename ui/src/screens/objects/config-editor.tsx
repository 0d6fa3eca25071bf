/**
 * The `config` of a middleware or service: a form for common types, or the whole object as YAML or
 * JSON in the code editor. Both views edit one object; switching keeps unsaved changes.
 */
import { useEffect, useState } from 'preact/hooks';
import { stringify as toYaml, parse as fromYaml } from 'yaml';
import { ApiError } from '../../api/client';
import { CodeEditor, type Diagnostic } from '../../components/code-editor';
import { Tabs } from '../../components/ui';

type Config = Record<string, unknown>;
export type EditorMode = 'form' | 'yaml' | 'json';

export function configText(config: Config, mode: 'yaml' | 'json'): string {
  return mode === 'json' ? JSON.stringify(config, null, 2) + '\n' : toYaml(config);
}

/** Parses editor text (YAML or JSON); throws with the parser's message. */
export function parseConfig(text: string, mode: 'yaml' | 'json'): Config {
  const value = mode === 'json' ? JSON.parse(text) : fromYaml(text);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('config must be a mapping (an object)');
  return value as Config;
}

/** Server details under /config, re-based on the edited document for the editor's diagnostics. */
export function configDiagnostics(error: unknown): Diagnostic[] {
  if (!(error instanceof ApiError)) return [];
  return error.details.filter((d) => d.path === '/config' || d.path.startsWith('/config/')).map((d) => ({ pointer: d.path.slice('/config'.length), message: d.message }));
}

interface Props {
  config: Config;
  onConfig: (config: Config) => void;
  error: unknown;
  formAvailable: boolean;
  renderForm: () => preact.ComponentChildren;
  /** Reports unparsable editor text (blocks saving) or null. */
  onParseError: (message: string | null) => void;
}

export function ConfigEditor({ config, onConfig, error, formAvailable, renderForm, onParseError }: Props) {
  const [mode, setMode] = useState<EditorMode>(formAvailable ? 'form' : 'yaml');
  const [text, setText] = useState(() => configText(config, 'yaml'));
  // a type with a form opens on the form; one without falls back to the editor
  useEffect(() => {
    if (formAvailable && mode !== 'form') setMode('form');
    if (!formAvailable && mode === 'form') {
      setText(configText(config, 'yaml'));
      setMode('yaml');
    }
  }, [formAvailable]);
  // the form or a template changed the object: refresh the text unless it already means the same
  useEffect(() => {
    if (mode === 'form') return;
    try {
      if (JSON.stringify(parseConfig(text, mode)) === JSON.stringify(config)) return;
    } catch {
      // unparsable text is replaced only when the object really changed from outside
    }
    setText(configText(config, mode));
  }, [config]);

  const switchTo = (next: EditorMode) => {
    if (next !== 'form') setText(configText(config, next));
    onParseError(null);
    setMode(next);
  };
  const onText = (next: string) => {
    setText(next);
    if (mode === 'form') return;
    try {
      onConfig(parseConfig(next, mode));
      onParseError(null);
    } catch (err) {
      onParseError(`${mode.toUpperCase()}: ${(err as Error).message}`);
    }
  };
  const tabs: [EditorMode, string][] = [
    ...(formAvailable ? ([['form', 'Form']] as [EditorMode, string][]) : []),
    ['yaml', 'YAML'],
    ['json', 'JSON'],
  ];
  return (
    <div class="config-editor">
      <Tabs<EditorMode> tabs={tabs} current={mode} onChange={switchTo} />
      {mode === 'form' ? renderForm() : <CodeEditor key={mode} value={text} language={mode} onChange={onText} diagnostics={configDiagnostics(error)} label={`config as ${mode}`} />}
    </div>
  );
}
