# Sourced by the scripts (`source scripts/foundry_path.sh "$root"`): puts the Foundry binaries on
# PATH. node_modules/.bin/{forge,anvil,cast} are node wrappers (@foundry-rs 1.7.1) that exit 0
# whatever the binary exits with, so a failed build, test or format check would look passed; the
# platform package's own binaries (node_modules/@foundry-rs/<tool>-<platform>/bin) come first, the
# same choice as chain.artifacts.find_binary.
PATH="$1/node_modules/.bin:$PATH"
for foundry_bin in "$1"/node_modules/@foundry-rs/*-*/bin; do
  if [[ -d "$foundry_bin" ]]; then PATH="$foundry_bin:$PATH"; fi
done
unset foundry_bin
export PATH
