import { useState } from 'react';
import type { Provider, Topic } from '../protocol.gen';
import { AcpAgentsSettings } from './AcpAgentsSettings';
import { AssistantsSettings } from './AssistantsSettings';
import { AuditLog } from './AuditLog';
import { DataSettings } from './DataSettings';
import { GeneralSettings } from './GeneralSettings';
import { McpSettings } from './McpSettings';
import { ProvidersSettings } from './ProvidersSettings';
import { RulesSettings } from './RulesSettings';
import { ToolsSettings } from './ToolsSettings';
import { UsageSettings } from './UsageSettings';

interface SettingsViewProps {
  providers: Provider[];
  topics: Topic[];
  onProvidersChanged: () => void;
  onAssistantsChanged: () => void;
  onClose: () => void;
}

type Section = 'providers' | 'assistants' | 'tools' | 'mcp' | 'agents' | 'rules' | 'audit' | 'usage' | 'general' | 'data';

const SECTIONS: readonly { id: Section; label: string }[] = [
  { id: 'providers', label: 'Providers' },
  { id: 'assistants', label: 'Assistants' },
  { id: 'tools', label: 'Tools' },
  { id: 'mcp', label: 'MCP servers' },
  { id: 'agents', label: 'Coding agents' },
  { id: 'rules', label: 'Approval rules' },
  { id: 'audit', label: 'Audit log' },
  { id: 'usage', label: 'Usage' },
  { id: 'general', label: 'General' },
  { id: 'data', label: 'Import & export' },
];

/** Settings, one section at a time: providers, assistants, tools, MCP servers, approval rules, the audit log, usage, app-wide settings, and import, export and backups. */
export function SettingsView({ providers, topics, onProvidersChanged, onAssistantsChanged, onClose }: SettingsViewProps) {
  const [section, setSection] = useState<Section>('providers');
  return (
    <section className="settings" data-testid="settings">
      <header className="chat-header">
        <h2>Settings</h2>
        <button type="button" className="button ghost" onClick={onClose} data-testid="settings-close">
          Back to chat
        </button>
      </header>
      <nav className="settings-tabs" role="tablist" aria-label="Settings sections">
        {SECTIONS.map((candidate) => (
          <button
            key={candidate.id}
            type="button"
            role="tab"
            className="settings-tab"
            data-testid="settings-tab"
            data-section={candidate.id}
            aria-selected={section === candidate.id}
            onClick={() => setSection(candidate.id)}
          >
            {candidate.label}
          </button>
        ))}
      </nav>
      <div className="settings-body" role="tabpanel">
        {section === 'providers' && <ProvidersSettings providers={providers} onProvidersChanged={onProvidersChanged} />}
        {section === 'assistants' && <AssistantsSettings providers={providers} onAssistantsChanged={onAssistantsChanged} />}
        {section === 'tools' && <ToolsSettings />}
        {section === 'mcp' && <McpSettings />}
        {section === 'agents' && <AcpAgentsSettings />}
        {section === 'rules' && <RulesSettings topics={topics} />}
        {section === 'audit' && <AuditLog topics={topics} />}
        {section === 'usage' && <UsageSettings />}
        {section === 'general' && <GeneralSettings />}
        {section === 'data' && <DataSettings />}
      </div>
    </section>
  );
}
