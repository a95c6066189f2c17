package tools

// Builtins returns every workspace tool, in the order the model sees them.
// ask_user and update_plan belong to the agent loop, not here.
func Builtins() []Tool {
	return []Tool{
		listDirTool{},
		readFileTool{},
		globFileSearchTool{},
		grepTool{},
		editFileTool{},
		applyPatchTool{},
		writeFileTool{},
		undoPatchTool{},
		runCmdTool{},
		processTool{},
		searchSemanticTool{},
		goToDefinitionTool{},
		findReferencesTool{},
		hoverTool{},
		webFetchTool{},
		webSearchTool{},
	}
}
