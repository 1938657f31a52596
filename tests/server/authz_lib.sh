# authz_lib.sh: the cast of the authorization tests, on top of lib.sh: a
# real allotd with one 8-GPU node; departments dept-a and dept-b with
# projects team-a (PA) and team-b (PB), 4 GPUs deserved each; and helpers
# that make users holding one access rule each. ALLOTD is the binary.

. "$(dirname "$0")/lib.sh"

start --db "$T/authz.db" --simulate-nodes 1x8 --rate-limit 0
ADMIN=$(login admin "$ALLOT_ADMIN_PASSWORD")
POOL=$(expect 200 GET /api/v1/node-pools "" "$ADMIN" | jq -r '.nodepools[0].id')
DA=$(expect 201 POST /api/v1/org-unit/departments '{"name":"dept-a","resources":[]}' "$ADMIN" | jq -r .id)
DB=$(expect 201 POST /api/v1/org-unit/departments '{"name":"dept-b","resources":[]}' "$ADMIN" | jq -r .id)
project() { # NAME DEPARTMENT
  expect 201 POST /api/v1/org-unit/projects "{\"name\":\"$1\",\"parentId\":\"$2\",\"resources\":
    [{\"nodePool\":{\"id\":\"$POOL\"},\"gpu\":{\"deserved\":4}}]}" "$ADMIN" | jq -r .id
}
PA=$(project team-a "$DA")
PB=$(project team-b "$DB")
user() { # EMAIL: creates the user, prints its temporary password
  expect 201 POST /api/v1/users "{\"email\":\"$1\"}" "$ADMIN" | jq -r .tempPassword
}
rule() { # EMAIL ROLE SCOPE-TYPE SCOPE-ID: prints the rule's id
  expect 201 POST /api/v1/authorization/access-rules "{\"subjectId\":\"$1\",\"subjectType\":\"user\",
    \"roleId\":$2,\"scopeType\":\"$3\",\"scopeId\":\"$4\"}" "$ADMIN" | jq -r .id
}
as_role() { # NAME ROLE SCOPE-TYPE SCOPE-ID: a token of a new user holding that rule
  pw=$(user "$1@example.com")
  [ "$2" = 0 ] || rule "$1@example.com" "$2" "$3" "$4" >/dev/null
  login "$1@example.com" "$pw"
}
# tokens_of_roles: sets TOK_admin, TOK_deptadmin (Department administrator
# of dept-a), TOK_editor, TOK_researcher (L1), TOK_mleng, TOK_viewer (each
# on team-a), TOK_norule (no access rule) and TOK_anon ("-": no token).
tokens_of_roles() {
  TOK_admin=$ADMIN
  TOK_deptadmin=$(as_role deptadmin 2 department "$DA")
  TOK_editor=$(as_role editor 3 project "$PA")
  TOK_researcher=$(as_role researcher 4 project "$PA")
  TOK_mleng=$(as_role mleng 5 project "$PA")
  TOK_viewer=$(as_role viewer 6 project "$PA")
  TOK_norule=$(as_role norule 0 - -)
  TOK_anon=-
}
