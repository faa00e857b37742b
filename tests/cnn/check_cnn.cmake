# Runs clrt-cnn and checks what it prints.
#   cmake -DCNN=<clrt-cnn> -P check_cnn.cmake   (with POCL_DEVICES="pthread pthread")

function(run_cnn)
  execute_process(COMMAND ${CNN} ${ARGN} OUTPUT_VARIABLE o ERROR_VARIABLE e RESULT_VARIABLE r)
  set(out "${o}${e}" PARENT_SCOPE)
  set(rc "${r}" PARENT_SCOPE)
endfunction()

function(expect what regex)
  if(NOT out MATCHES "${regex}")
    message(FATAL_ERROR "clrt-cnn: ${what}: no match for '${regex}' in\n${out}")
  endif()
endfunction()

function(expect_rc what want)
  if(NOT rc EQUAL want)
    message(FATAL_ERROR "clrt-cnn: ${what}: exit ${rc}, wanted ${want}\n${out}")
  endif()
endfunction()

run_cnn(--help)
expect_rc("--help" 0)
expect("--help prints usage" "usage: clrt-cnn")
run_cnn(--bogus)
expect_rc("unknown flag" 2)
expect("unknown flag named with usage" "unknown option '--bogus'.*usage: clrt-cnn")
run_cnn(--epochs zero)
expect_rc("bad number" 2)
expect("bad number explained" "--epochs 'zero': expected an integer")
run_cnn(--model resnet)
expect_rc("bad model" 2)
run_cnn(--model seed-cnn --dataset fashion-mnist --epochs 1 --limit 256)
expect_rc("model and data set mismatch" 1)
expect("the mismatch explained"
       "clrt-cnn: model seed-cnn needs 3x32x32 inputs, the data set has 1x28x28 \\(use --model lenet")
run_cnn(--data-dir /nonexistent-clrt-dir --epochs 1)
expect_rc("missing data" 1)
expect("missing file named" "/nonexistent-clrt-dir/train-images-idx3-ubyte")
# Issue 14, defect 6: ranges named, no silent root folder, divergence stops.
run_cnn(--lr 1e300)
expect_rc("lr out of range" 2)
expect("the range is named" "--lr '1e300': expected a number from 0 to 1e\\+06")
run_cnn(--momentum -1)
expect_rc("momentum out of range" 2)
expect("the range is named" "--momentum '-1': expected a number from 0 to")
run_cnn(--data-dir= --epochs 1)
expect_rc("empty data folder" 1)
expect("empty data folder refused" "data set folder is an empty string")
run_cnn(--lr 1e6 --schedule constant --limit 512 --epochs 3 --device cpu)
expect_rc("a diverging run fails" 1)
expect("divergence explained" "training diverged: the mean loss of epoch ([1-3]) is -?(nan|inf)")
set(bad_epoch "${CMAKE_MATCH_1}")
expect("the learning rate named" "lower the learning rate \\(it is 1e\\+06\\)")
if(out MATCHES "epoch +${bad_epoch} +lr" OR out MATCHES "final test accuracy")
  message(FATAL_ERROR "clrt-cnn: a diverged run reported epoch ${bad_epoch} or a result\n${out}")
endif()

run_cnn(--device tpu --limit 256 --epochs 1)
expect_rc("bad device" 1)
expect("bad device lists the forms" "unknown device 'tpu'; accepted forms")

# A short real run: loss printed per epoch, the test set evaluated.
run_cnn(--limit 2048 --test-limit 1000 --epochs 2 --device cpu:1)
expect_rc("training run" 0)
expect("both limits" "train \\(2048 images\\), fashion-mnist/test \\(1000 images\\)")
expect("two epoch lines on cpu:1" "cpu:1 +epoch +1 .*cpu:1 +epoch +2 ")
expect("final accuracy" "final test accuracy 0\\.[0-9]+ on cpu:1")

run_cnn(--limit 1024 --epochs 1 --compare)
expect_rc("--compare" 0)
expect("--compare table has both devices" "speed-up/cpu.*\ncpu +[0-9.]+ .*\ncpu:1 +[0-9.]+")

run_cnn(--limit 1024 --batch-sweep 64,256)
expect_rc("--batch-sweep" 0)
expect("--batch-sweep table" "data share.*\n64 +[0-9.]+ .*%.*\n256 +[0-9.]+ ")

# The data section of a safetensors file (what follows its header), as hex:
# the tensors' bytes, without the header whose metadata holds each save's id.
function(tensor_bytes file var)
  file(READ ${file} len LIMIT 8 HEX)
  set(n 0)
  foreach(i 7 6 5 4 3 2 1 0)
    math(EXPR at "${i} * 2")
    string(SUBSTRING "${len}" ${at} 2 byte)
    math(EXPR n "${n} * 256 + 0x${byte}")
  endforeach()
  math(EXPR n "${n} + 8")
  file(READ ${file} data OFFSET ${n} HEX)
  set(${var} "${data}" PARENT_SCOPE)
endfunction()

# run_cnn under a preloaded hook that kills the process at the n-th rename
# onto a path ending in .optim (tests/probe/rename_hook.c).
function(run_cnn_killed n)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env LD_PRELOAD=${HOOK} PROBE_RENAME_SUFFIX=.optim
                          PROBE_KILL_AFTER_RENAME=${n} ${CNN} ${ARGN}
                  OUTPUT_VARIABLE o ERROR_VARIABLE e RESULT_VARIABLE r)
  set(out "${o}${e}" PARENT_SCOPE)
  set(rc "${r}" PARENT_SCOPE)
endfunction()

# --save / --resume: one epoch, then a resumed second (constant schedule:
# a run may be extended), ends with the very tensors (model and optimizer
# state) and the same printed figures as two epochs straight through.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(common --limit 1024 --batch-size 64 --optimizer adam --device cpu)
set(const ${common} --schedule constant)
set(figures "epoch +2 +lr [0-9.]+ +loss [0-9.]+ +train acc [0-9.]+ +test acc [0-9.]+")
run_cnn(${const} --epochs 2 --save ${WORK}/straight.safetensors)
expect_rc("--save" 0)
string(REGEX MATCH "${figures}" straight "${out}")
run_cnn(${const} --epochs 1 --save ${WORK}/resumed.safetensors)
expect_rc("--save, 1 epoch" 0)
run_cnn(${const} --epochs 2 --resume ${WORK}/resumed.safetensors
        --save ${WORK}/resumed.safetensors)
expect_rc("--resume" 0)
expect("--resume runs epoch 2 only" "^[^\n]*\n[^\n]*\n[^\n]*\n[^\n]*epoch +2 ")
string(REGEX MATCH "${figures}" resumed "${out}")
if(NOT straight OR NOT straight STREQUAL resumed)
  message(FATAL_ERROR "clrt-cnn: resumed epoch 2 printed '${resumed}', straight '${straight}'")
endif()
foreach(f resumed.safetensors resumed.safetensors.optim)
  string(REPLACE resumed straight g ${f})
  tensor_bytes(${WORK}/${f} a)
  tensor_bytes(${WORK}/${g} b)
  if(NOT a STREQUAL b)
    message(FATAL_ERROR "clrt-cnn: ${f}'s tensors after --resume differ from ${g}'s")
  endif()
endforeach()
run_cnn(${const} --epochs 2 --resume ${WORK}/resumed.safetensors)
expect_rc("--resume with nothing left" 1)
expect("nothing left explained" "already holds 2 epochs")

# Issue 25: a resume is checked against the run that saved the pair.
run_cnn(--limit 1024 --batch-size 100 --optimizer adam --schedule constant --epochs 3
        --resume ${WORK}/resumed.safetensors)
expect_rc("--resume with another batch size" 1)
expect("batch size mismatch explained" "batch-size '64', this run has '100'")
run_cnn(--limit 2048 --batch-size 64 --optimizer adam --schedule constant --epochs 3
        --resume ${WORK}/resumed.safetensors)
expect_rc("--resume with another --limit" 1)
expect("limit mismatch explained" "training samples '1024', this run has '2048'")
run_cnn(--limit 1024 --batch-size 64 --schedule constant --epochs 3
        --resume ${WORK}/resumed.safetensors)
expect_rc("--resume with another optimizer" 1)
expect("optimizer mismatch explained" "optimizer 'adam', this run has 'sgd'")
run_cnn(${common} --epochs 3 --resume ${WORK}/resumed.safetensors)
expect_rc("--resume with another schedule" 1)
expect("schedule mismatch explained" "schedule 'constant', this run has 'cosine over 3 epochs'")
run_cnn(--epochs 3 --resume ${WORK}/absent.safetensors)
expect_rc("--resume from nothing" 1)
expect("missing checkpoint named" "absent.safetensors: cannot open")

# The model file of epoch 2 beside the .optim of epoch 1 (what a kill
# between two separate saves used to leave) is refused, naming both.
run_cnn(${const} --epochs 1 --save ${WORK}/mixed.safetensors)
file(RENAME ${WORK}/mixed.safetensors.optim ${WORK}/mixed-1.optim)
run_cnn(${const} --epochs 2 --save ${WORK}/mixed.safetensors)
file(RENAME ${WORK}/mixed-1.optim ${WORK}/mixed.safetensors.optim)
run_cnn(${const} --epochs 3 --resume ${WORK}/mixed.safetensors)
expect_rc("--resume from a mixed pair" 1)
expect("mixed pair explained" "mixed.safetensors \\(epoch 2, step 32\\) and .*\\(epoch 1, step 16\\) come from different saves")

# The default (cosine) schedule resumes as if never stopped: a 3-epoch run
# killed after epoch 2's save, resumed, prints the uninterrupted run's
# epoch 3. With another --epochs it is refused: the schedule spans them.
run_cnn(${common} --epochs 3)
expect_rc("3 epochs straight" 0)
string(REGEX MATCH "epoch +3 +lr [0-9.]+ +loss [0-9.]+ +train acc [0-9.]+ +test acc [0-9.]+"
       straight3 "${out}")
run_cnn_killed(2 ${common} --epochs 3 --save ${WORK}/killed.safetensors)
if(rc EQUAL 0)
  message(FATAL_ERROR "clrt-cnn: the run to be killed after epoch 2 was not killed\n${out}")
endif()
run_cnn(${common} --epochs 3 --resume ${WORK}/killed.safetensors)
expect_rc("--resume after a kill" 0)
string(REGEX MATCH "epoch +3 +lr [0-9.]+ +loss [0-9.]+ +train acc [0-9.]+ +test acc [0-9.]+"
       resumed3 "${out}")
if(NOT straight3 OR NOT straight3 STREQUAL resumed3)
  message(FATAL_ERROR "clrt-cnn: resumed epoch 3 '${resumed3}', uninterrupted '${straight3}'")
endif()
run_cnn(${common} --epochs 4 --resume ${WORK}/killed.safetensors)
expect_rc("cosine resume with more epochs" 1)
expect("cosine resume refused" "schedule 'cosine over 3 epochs', this run has 'cosine over 4 epochs'.*the same --epochs")

# Outputs are checked before the first step (issue 25: after the last).
foreach(flag --save --plot)
  run_cnn(--limit 256 --epochs 1 --device cpu ${flag} ${WORK}/no-such-folder/x)
  expect_rc("${flag} into a missing folder" 1)
  expect("${flag} checked first" "^clrt-cnn: ${flag}: cannot write .*no-such-folder/x: its folder")
endforeach()
run_cnn(--limit 256 --epochs 1 --device cpu --save=)
expect_rc("--save ''" 1)
expect("--save '' refused first" "^clrt-cnn: --save: no path given")
execute_process(COMMAND ${CMAKE_COMMAND} -E env CLRT_TRACE=${WORK}/no-such-folder/t.json
                        ${CNN} --limit 256 --epochs 1 --device cpu
                OUTPUT_VARIABLE o ERROR_VARIABLE e RESULT_VARIABLE rc)
set(out "${o}${e}")
expect_rc("CLRT_TRACE into a missing folder" 1)
expect("CLRT_TRACE checked first" "^clrt-cnn: CLRT_TRACE: cannot write .*no-such-folder/t.json")

# A first run with cold caches (clrt's and PoCL's) compiles every kernel the
# demo uses: the OpenCL compiler must have nothing to say, since its stderr
# is a newcomer's first sight (clrt's own warnings are another matter).
file(REMOVE_RECURSE ${WORK}/cold-cache)
set(ENV{CLRT_CACHE_DIR} ${WORK}/cold-cache)
set(ENV{POCL_KERNEL_CACHE} 0)
run_cnn(--limit 512 --test-limit 256 --epochs 1 --device cpu)
expect_rc("cold run" 0)
string(REGEX REPLACE "clrt: warning:[^\n]*" "" compiler "${out}")
if(compiler MATCHES "warning|generated\\.")
  message(FATAL_ERROR "clrt-cnn: the OpenCL compiler warned on a cold run:\n${out}")
endif()
