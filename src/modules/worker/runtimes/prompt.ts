import type { WorkerRunRequest, SkillPayload } from '../../../contracts/worker.ts';

/**
 * Builds what the model is told, alike for every runtime: the profile's system prompt with the run's skills appended
 * (name, description, body, resource list), and the user message from the subtask (its files listed after the prompt).
 */
function skillSection(skill: SkillPayload): string {
  const lines = [`### ${skill.name}`];
  if (skill.description) lines.push(skill.description);
  lines.push('', skill.body.trim());
  if (skill.resources?.length) {
    lines.push('', skill.dir ? `Resources (files in ${skill.dir}):` : 'Resources:');
    for (const r of skill.resources) {
      const facts = [r.contentType, r.size === undefined ? undefined : `${r.size} bytes`, r.executable ? 'executable' : undefined].filter(Boolean).join(', ');
      lines.push(`- ${r.path}${facts ? ` (${facts})` : ''}`);
    }
  } else if (skill.dir) lines.push('', `Its folder: ${skill.dir}`);
  return lines.join('\n');
}

export function systemPromptOf(req: WorkerRunRequest): string | undefined {
  const parts: string[] = [];
  if (req.profile.systemPrompt?.trim()) parts.push(req.profile.systemPrompt.trim());
  if (req.skills?.length) parts.push(['## Skills', '', ...req.skills.map(skillSection)].join('\n\n'));
  return parts.length ? parts.join('\n\n') : undefined;
}

export function userPromptOf(req: WorkerRunRequest): string {
  const prompt = req.subtask.prompt.trim() ? req.subtask.prompt : req.subtask.title;
  const files = req.subtask.files ?? [];
  return files.length ? `${prompt}\n\nFiles:\n${files.map((f) => `- ${f}`).join('\n')}` : prompt;
}
