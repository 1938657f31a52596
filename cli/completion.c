/*
 * completion.c: `allot completion bash`: a bash completion script for
 * every command, verb and flag, completing project, department, node
 * pool and workload names by asking the server (quietly: no names when
 * not logged in).
 *
 *   source <(allot completion bash)
 *   allot completion bash > /etc/bash_completion.d/allot
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char script[] =
    "# bash completion for allot: source <(allot completion bash)\n"
    "_allot_list() {\n"
    "    allot \"$@\" --no-headers 2>/dev/null | awk '{print $1}'\n"
    "}\n"
    "\n"
    "_allot_flags() {\n"
    "    local fmt='--json --yaml --csv --no-headers'\n"
    "    case \"$1 $2\" in\n"
    "    'login '*) echo '--url --user --password-stdin --client-id --client-secret-stdin' ;;\n"
    "    'project list'|'department list'|'node list'|'nodepool list'|'access-rule list') "
    "echo \"$fmt\" ;;\n"
    "    'project edit'|'department edit') echo '--node-pool --gpu-quota --limit "
    "--over-quota-weight --over-quota-priority --rank --description --default-node-pools "
    "--training-node-types --workspace-node-types --workspace-time-limit "
    "--workspace-idle-limit --preemptible-workspace-idle-limit --training-time-limit "
    "--training-idle-limit --json' ;;\n"
    "    'nodepool create'|'nodepool edit') echo '--label --placement --cpu-placement "
    "--min-runtime --time-based-fairshare --tbf-window --tbf-half-life --tbf-k --json' ;;\n"
    "    'nodepool delete'|'access-rule delete'|'project delete'|'department delete') "
    "echo '--yes' ;;\n"
    "    'project describe'|'department describe') echo '--output' ;;\n"
    "    'access-rule create') echo '--subject --subject-type --role --system --department "
    "--project --json' ;;\n"
    "    'project create') echo '--gpu-quota --node-pool --over-quota-weight --limit "
    "--department --json' ;;\n"
    "    'department create') echo '--gpu-quota --node-pool --over-quota-weight --limit "
    "--json' ;;\n"
    "    *' submit') echo '--image --gpu-devices-request --gpu-portion-request "
    "--gpu-memory-request --port --cpu-core-request --cpu-memory-request --project --environment --command --node-pools "
    "--node-type --priority --preemptibility --working-dir --name --name-prefix --parallelism "
    "--workers --framework --no-master --min-replicas --max-replicas --dry-run --json "
    "--compute --data-source --credential --template' ;;\n"
    "    'environment create'|'compute create'|'datasource create'|'credential create'|"
    "'template create') echo '--project --department --tenant --kind --spec --assets "
    "--description --json' ;;\n"
    "    'whatif quota') echo '--gpu-quota --node-pool --department --json' ;;\n"
    "    'whatif drain') echo '--json' ;;\n"
    "    'whatif delete'|'whatif suspend') echo '--project --json' ;;\n"
    "    *' list') echo \"--all --project --status --type $fmt\" ;;\n"
    "    *' describe') echo '--project --output --event-limit --general --compute --pods "
    "--events --show-events' ;;\n"
    "    *' delete') echo '--project --yes --all' ;;\n"
    "    *' suspend'|*' resume') echo '--project' ;;\n"
    "    *' logs') echo '--project --follow --tail --pod' ;;\n"
    "    esac\n"
    "}\n"
    "\n"
    "_allot() {\n"
    "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
    "    local group=${COMP_WORDS[1]} at=2 verb words\n"
    "    local groups='login logout whoami project department training workspace inference "
    "distributed workload node nodepool whatif access-rule agent completion simulate replay "
    "version environment compute datasource credential template policy'\n"
    "    local wverbs='submit list describe delete suspend resume logs'\n"
    "    COMPREPLY=()\n"
    "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
    "        COMPREPLY=($(compgen -W \"$groups --help --version\" -- \"$cur\"))\n"
    "        return\n"
    "    fi\n"
    "    if [ \"$group\" = training ]; then\n"
    "        case ${COMP_WORDS[2]} in\n"
    "        standard|pytorch|mpi|tensorflow|xgboost|jax) at=3 ;;\n"
    "        esac\n"
    "    fi\n"
    "    verb=${COMP_WORDS[at]}\n"
    "    case $prev in\n"
    "    -p|--project) COMPREPLY=($(compgen -W \"$(_allot_list project list)\" -- \"$cur\")); "
    "return ;;\n"
    "    --department) COMPREPLY=($(compgen -W \"$(_allot_list department list)\" -- "
    "\"$cur\")); return ;;\n"
    "    --node-pools|--node-pool) COMPREPLY=($(compgen -W \"$(_allot_list nodepool list)\" "
    "-- \"$cur\")); return ;;\n"
    "    --status) COMPREPLY=($(compgen -W 'Pending Running Stopped Completed Failed Creating "
    "Deleting' -- \"$cur\")); return ;;\n"
    "    --placement|--cpu-placement) COMPREPLY=($(compgen -W 'binpack spread fragmentation' "
    "-- \"$cur\")); return ;;\n"
    "    --over-quota-priority) COMPREPLY=($(compgen -W 'None Low Normal High' -- \"$cur\")); "
    "return ;;\n"
    "    --time-based-fairshare) COMPREPLY=($(compgen -W 'on off' -- \"$cur\")); return ;;\n"
    "    --type) COMPREPLY=($(compgen -W 'training workspace inference distributed' -- "
    "\"$cur\")); return ;;\n"
    "    --preemptibility) COMPREPLY=($(compgen -W 'preemptible non-preemptible' -- "
    "\"$cur\")); return ;;\n"
    "    --priority) COMPREPLY=($(compgen -W 'very-low low medium-low medium medium-high high "
    "very-high train build interactive-preemptible inference' -- \"$cur\")); return ;;\n"
    "    --framework) COMPREPLY=($(compgen -W 'PyTorch MPI TF XGBoost JAX' -- \"$cur\")); "
    "return ;;\n"
    "    -o|--output) COMPREPLY=($(compgen -W 'table json yaml' -- \"$cur\")); return ;;\n"
    "    esac\n"
    "    if [ \"$COMP_CWORD\" -eq \"$at\" ]; then\n"
    "        case $group in\n"
    "        project) words='list set describe create edit delete' ;;\n"
    "        department) words='list describe create edit delete' ;;\n"
    "        node) words='list' ;;\n"
    "        nodepool) words='list create edit delete' ;;\n"
    "        access-rule) words='list create delete' ;;\n"
    "        policy) words='list describe' ;;\n"
    "        environment|compute|datasource|credential|template) "
    "words='list describe create delete' ;;\n"
    "        whatif) words='quota drain delete suspend' ;;\n"
    "        agent) words='token' ;;\n"
    "        completion) words='bash' ;;\n"
    "        training) words=\"$wverbs standard pytorch mpi tensorflow xgboost jax\" ;;\n"
    "        workspace|distributed) words=$wverbs ;;\n"
    "        inference) words='submit list describe delete logs' ;;\n"
    "        workload) words='list describe delete suspend resume logs' ;;\n"
    "        login) words=$(_allot_flags login) ;;\n"
    "        esac\n"
    "        COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
    "        return\n"
    "    fi\n"
    "    if [[ $cur == -* ]]; then\n"
    "        COMPREPLY=($(compgen -W \"$(_allot_flags \"$group\" \"$verb\") --help\" -- "
    "\"$cur\"))\n"
    "        return\n"
    "    fi\n"
    "    case \"$group $verb\" in\n"
    "    'project set'|'project describe'|'project edit'|'project delete')\n"
    "        words=$(_allot_list project list) ;;\n"
    "    'department describe'|'department edit'|'department delete')\n"
    "        words=$(_allot_list department list) ;;\n"
    "    'nodepool edit'|'nodepool delete') words=$(_allot_list nodepool list) ;;\n"
    "    *' describe'|*' delete'|*' suspend'|*' resume'|*' logs')\n"
    "        words=$(_allot_list \"$group\" list -A) ;;\n"
    "    esac\n"
    "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
    "}\n"
    "complete -F _allot allot\n";

static const struct cli_cmd completion_cmd = {
    "allot completion", "bash",
    "Prints a bash completion script. Load it in the current shell with\n"
    "  source <(allot completion bash)\n"
    "or install it with\n"
    "  allot completion bash > /etc/bash_completion.d/allot\n",
};

int cmd_completion_main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
        return cli_help(&completion_cmd);
    if (argc < 2)
        return cli_usage_error(&completion_cmd, "which shell? only bash is supported");
    if (argc > 2)
        return cli_usage_error(&completion_cmd, "unexpected argument '%s'", argv[2]);
    if (strcmp(argv[1], "bash") != 0)
        return cli_usage_error(&completion_cmd, "no completion for '%s': only bash is supported",
                               argv[1]);
    fputs(script, stdout);
    return CLI_OK;
}
