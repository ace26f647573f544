// Evaluates requests against a resource policy (and each principal's
// identity policies) with @cloud-copilot/iam-simulate, as AWS's policy
// evaluation logic would: reads {"resourcePolicy", "requests"} as JSON on
// stdin, writes one {"name", "result"} per request (the overall result:
// Allowed, ExplicitlyDenied or ImplicitlyDenied; or the validation errors)
// as JSON.
import { runSimulation } from '@cloud-copilot/iam-simulate'

let input = ''
for await (const chunk of process.stdin) input += chunk
const { resourcePolicy, requests } = JSON.parse(input)
const out = []
for (const r of requests) {
  const simulation = {
    identityPolicies: (r.identityPolicies ?? []).map((policy, i) => ({ name: `identity${i}`, policy })),
    serviceControlPolicies: [],
    resourceControlPolicies: [],
    resourcePolicy,
    request: {
      principal: r.principal,
      action: r.action,
      resource: { resource: r.resource, accountId: r.accountId },
      contextVariables: r.context,
    },
  }
  const result = await runSimulation(simulation, {})
  out.push({
    name: r.name,
    result: result.resultType === 'error' ? 'error: ' + JSON.stringify(result.errors) : result.overallResult,
  })
}
process.stdout.write(JSON.stringify(out))
